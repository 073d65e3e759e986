"""The one-time v1 → v2 migration, through an isolated read-only reader (R-VEC-2).

v1 is the earlier layout `<stem>.duckdb`: `memory_vector_v1(memory_id VARCHAR, embedding
FLOAT[<dim>])` without a key, and `legacy_meta(provider, model, dim)`. The v1 file is only ever
attached READ_ONLY to a private in-memory connection, never opened as a store. A v1 whose meta
is not exactly one row matching the requested identity, or whose rows are not usable (NULLs,
duplicate ids, a column that disagrees with its meta), is deleted and an empty v2 published —
the warm-up coverage check then asks for every vector again. Otherwise its rows are copied in
pages (rowid ranges), inside one INSERT-only transaction, into the staging file; counts
are verified; the rename publishes; v1 is deleted best-effort afterwards.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import duckdb
import numpy as np

from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import StoreError, StoreQuarantined

from .files import StoreFiles, remove_quietly
from .guard import AbortFlag
from .publish import STAGE, StepHook, publish
from .schema import connect, sql_literal

__all__ = ["LEGACY_META", "LEGACY_TABLE", "migrate_v1", "write_v1_file"]

_log = logging.getLogger(__name__)

LEGACY_TABLE = "memory_vector_v1"
LEGACY_META = "legacy_meta"
_LEGACY = "legacy"


def migrate_v1(
    files: StoreFiles,
    identity: EmbeddingIdentity,
    *,
    page_size: int,
    abort: AbortFlag,
    on_step: StepHook,
    bind: Callable[[duckdb.DuckDBPyConnection | None], None],
) -> int:
    """Publish a v2 store from the v1 file; returns how many vectors were carried over.

    A native failure once the legacy file is being read writes the quarantine marker and
    raises StoreQuarantined: vector admission closes for the agent in this process, and the
    next process wipes the agent's files (step 0) and starts empty.
    """
    try:
        expected = _inspect(files.v1, identity, bind)
    except duckdb.Error as exc:
        files.write_marker(f"v1 read failed: {type(exc).__name__}")
        raise StoreQuarantined(f"legacy vector store unreadable ({type(exc).__name__})") from exc
    if expected is None:
        _log.warning("legacy vector store for %s does not match; starting empty", files.stem)
        remove_quietly(files.v1, files.v1_wal)
        publish(files, identity, abort=abort, on_step=on_step, bind=bind)
        return 0

    def populate(conn: duckdb.DuckDBPyConnection, abort: AbortFlag) -> int:
        conn.execute(f"ATTACH {sql_literal(str(files.v1))} AS {_LEGACY} (READ_ONLY)")
        on_step("legacy-attached")
        copied = _copy_pages(conn, page_size, abort, on_step)
        conn.execute(f"DETACH {_LEGACY}")
        if copied != expected:
            raise StoreError(f"copied {copied} legacy vectors, expected {expected}")
        return copied

    try:
        publish(files, identity, abort=abort, on_step=on_step, bind=bind, populate=populate)
    except duckdb.InterruptException:
        raise  # the guard stopped us: the staging file is garbage, v1 is untouched
    except duckdb.Error as exc:
        files.write_marker(f"v1 migration failed: {type(exc).__name__}")
        raise StoreQuarantined(f"legacy vector migration failed ({type(exc).__name__})") from exc
    remove_quietly(files.v1, files.v1_wal)
    on_step("legacy-deleted")
    _log.info("migrated %d legacy vectors for %s", expected, files.stem)
    return expected


def _inspect(
    v1: Path, identity: EmbeddingIdentity, bind: Callable[[duckdb.DuckDBPyConnection | None], None]
) -> int | None:
    """The v1 row count if the file is a usable v1 store for `identity`, else None."""
    conn = connect(None)
    bind(conn)
    try:
        conn.execute(f"ATTACH {sql_literal(str(v1))} AS {_LEGACY} (READ_ONLY)")
        columns = dict(
            conn.execute(
                "SELECT table_name || '.' || column_name, data_type FROM duckdb_columns() "
                f"WHERE database_name = '{_LEGACY}'"
            ).fetchall()
        )
        wanted = {
            f"{LEGACY_META}.provider": "VARCHAR",
            f"{LEGACY_META}.model": "VARCHAR",
            f"{LEGACY_TABLE}.memory_id": "VARCHAR",
            f"{LEGACY_TABLE}.embedding": f"FLOAT[{identity.dim}]",
        }
        if any(columns.get(name) != kind for name, kind in wanted.items()):
            return None
        if f"{LEGACY_META}.dim" not in columns:
            return None
        meta = conn.execute(f"SELECT provider, model, dim FROM {_LEGACY}.{LEGACY_META}").fetchall()
        if meta != [(identity.provider, identity.model, identity.dim)]:
            return None
        total, distinct, nulls = conn.execute(
            f"SELECT count(*), count(DISTINCT memory_id), "
            f"count(*) FILTER (WHERE memory_id IS NULL OR embedding IS NULL) "
            f"FROM {_LEGACY}.{LEGACY_TABLE}"
        ).fetchall()[0]
        if nulls or total != distinct:
            return None
        return int(total)
    finally:
        bind(None)
        conn.close()


def _copy_pages(
    conn: duckdb.DuckDBPyConnection, page_size: int, abort: AbortFlag, on_step: StepHook
) -> int:
    # Pages are rowid ranges: v1 has no key, so paging by id would re-sort the table for
    # every page, while a rowid range is a zone-map-pruned slice (linear overall).
    (high,) = conn.execute(
        f"SELECT coalesce(max(rowid), -1) FROM {_LEGACY}.{LEGACY_TABLE}"
    ).fetchall()[0]
    copied = 0
    conn.execute("BEGIN")
    try:
        for low in range(0, int(high) + 1, page_size):
            abort.check()
            (count,) = conn.execute(
                f"INSERT INTO {STAGE}.memory_vector SELECT memory_id, embedding "
                f"FROM {_LEGACY}.{LEGACY_TABLE} WHERE rowid >= ? AND rowid < ?",
                [low, low + page_size],
            ).fetchall()[0]
            copied += int(count)
            on_step("page-copied")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # an interrupt already rolled it back
            conn.execute("ROLLBACK")
        raise
    return copied


def write_v1_file(
    path: Path,
    identity: EmbeddingIdentity,
    vectors: Mapping[str, Sequence[float]],
    *,
    meta: Sequence[tuple[str, str, int]] | None = None,
) -> None:
    """Write a v1 store (tests and migration drills): `meta` overrides the legacy_meta rows."""
    conn = connect(path)
    try:
        conn.execute(f"CREATE TABLE {LEGACY_META} (provider VARCHAR, model VARCHAR, dim INTEGER)")
        rows = [(identity.provider, identity.model, identity.dim)] if meta is None else meta
        for row in rows:
            conn.execute(f"INSERT INTO {LEGACY_META} VALUES (?, ?, ?)", list(row))
        conn.execute(
            f"CREATE TABLE {LEGACY_TABLE} (memory_id VARCHAR, embedding FLOAT[{int(identity.dim)}])"
        )
        if vectors:
            appender = conn.appender(LEGACY_TABLE)
            appender.append_rows(
                (claim_id, np.asarray(vector, dtype=np.float32))
                for claim_id, vector in vectors.items()
            )
            appender.flush()
        conn.execute("CHECKPOINT")
    finally:
        conn.close()
