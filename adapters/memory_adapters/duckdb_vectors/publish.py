"""The only way a v2 store comes into being: build it at the staging path, then rename.

`publish` creates the schema and meta row in `<stem>.v2.duckdb.migrating`, lets a populate
step copy rows in (the v1 migration), verifies format and row count, checkpoints, closes,
asserts no staging WAL is left, and atomically renames staging over the v2 path — the one
commit point (R-VEC-2). A crash before the rename leaves the old state intact (the next open
deletes the staging file); after it, the new store is complete. `compact` is the same path
with the current file's live rows as content: the one way to get deleted rows' bytes out of
a DuckDB file. `open_v2` is the open self-check of the published file.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import duckdb

from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import StoreError, StoreQuarantined

from .files import StoreFiles, fsync_directory, remove_quietly
from .guard import AbortFlag
from .schema import (
    FILE_MEMORY_LIMIT,
    UnusableStore,
    connect,
    create_schema,
    read_identity,
    sql_literal,
)

__all__ = ["STAGE", "Populate", "StepHook", "compact", "open_v2", "publish"]

# Crash tests stop the process at named steps; production passes a no-op.
StepHook = Callable[[str], None]
# Fills `stage.memory_vector` through the given connection; returns the expected row count.
Populate = Callable[[duckdb.DuckDBPyConnection, AbortFlag], int]

STAGE = "stage"


def publish(
    files: StoreFiles,
    identity: EmbeddingIdentity,
    *,
    abort: AbortFlag,
    on_step: StepHook,
    bind: Callable[[duckdb.DuckDBPyConnection | None], None],
    populate: Populate | None = None,
    instance: duckdb.DuckDBPyConnection | None = None,
) -> None:
    """Build a v2 store for `identity` at staging and rename it into place.

    `bind` is told the working connection so the guard can interrupt it. Any existing v2
    file (whose connection the caller has closed) is replaced. The staging file is built
    through `instance` (an in-memory connection the caller keeps, to open the published
    file in: `open_v2`), else through one made and closed here.
    """
    files.root.mkdir(parents=True, exist_ok=True)
    remove_quietly(files.staging, files.staging_wal)
    conn = connect(None) if instance is None else instance
    bind(conn)
    try:
        conn.execute(f"ATTACH {sql_literal(str(files.staging))} AS {STAGE}")
        on_step("staging-created")
        conn.execute("BEGIN")
        create_schema(conn, identity, catalog=STAGE)
        conn.execute("COMMIT")
        if populate is not None:
            # Copied content is checked before it may replace anything; an empty store is
            # checked once, by the self-check of the published file (`open_v2`).
            expected = populate(conn, abort)
            if read_identity(conn, catalog=STAGE) != identity:
                raise StoreError("staged vector store does not carry the requested identity")
            (count,) = conn.execute(f"SELECT count(*) FROM {STAGE}.memory_vector").fetchall()[0]
            if count != expected:
                raise StoreError(f"staged vector store has {count} rows, expected {expected}")
        on_step("staging-populated")
        abort.check()
        conn.execute(f"CHECKPOINT {STAGE}")
        conn.execute(f"DETACH {STAGE}")
    finally:
        bind(None)
        if instance is None:
            conn.close()
    on_step("staging-closed")
    if files.staging_wal.exists():
        raise StoreError("staged vector store left a WAL after its checkpoint")
    # The last moment at which giving up leaves everything as it was.
    abort.check()
    # A WAL beside the file being replaced belongs to the old store; it must never be
    # replayed onto the new one. Losing it costs at most the old store's tail, and the
    # old store is being replaced anyway.
    remove_quietly(files.v2_wal)
    os.replace(files.staging, files.v2)
    fsync_directory(files.root)
    on_step("published")


def compact(
    files: StoreFiles,
    identity: EmbeddingIdentity,
    *,
    abort: AbortFlag,
    on_step: StepHook,
    bind: Callable[[duckdb.DuckDBPyConnection | None], None],
) -> None:
    """Rewrite the closed v2 file with only its live rows, then drop the scrub marker.

    Attached read-write so a residual WAL (a kill after the delete committed) is replayed
    first. A crash before the rename leaves the old file and the marker, so the next open
    compacts again; after it, the deleted rows exist in no file.
    """
    source = "scrub_source"

    def copy_live(conn: duckdb.DuckDBPyConnection, abort: AbortFlag) -> int:
        conn.execute(f"ATTACH {sql_literal(str(files.v2))} AS {source}")
        try:
            abort.check()
            conn.execute(
                f"INSERT INTO {STAGE}.memory_vector "
                f"SELECT memory_id, embedding FROM {source}.memory_vector"
            )
            (count,) = conn.execute(f"SELECT count(*) FROM {source}.memory_vector").fetchall()[0]
        finally:
            conn.execute(f"DETACH {source}")
        return int(count)

    publish(files, identity, abort=abort, on_step=on_step, bind=bind, populate=copy_live)
    remove_quietly(files.scrub)
    fsync_directory(files.root)


def open_v2(
    files: StoreFiles, *, after_publish: bool, instance: duckdb.DuckDBPyConnection | None = None
) -> tuple[duckdb.DuckDBPyConnection, EmbeddingIdentity]:
    """Open and self-check the v2 file.

    A file DuckDB cannot open, or one that fails right after we published it, is a native
    failure: the quarantine marker is written and StoreQuarantined raised (the next process
    recovers). A file that opens but is not a valid v2 store raises UnusableStore, which the
    caller answers by publishing a fresh store.

    Given `instance` (the in-memory connection that just published the file), the file is
    attached to it and made its default database, with the file connection's memory limit:
    starting a second DuckDB instance cost a new agent's first embeddings ~11 ms of CPU
    beside the model (issue 15). Closing the connection closes the file as before.
    """
    try:
        conn = connect(files.v2) if instance is None else _attached(instance, files)
    except duckdb.Error as exc:
        files.write_marker(f"open failed: {type(exc).__name__}")
        raise StoreQuarantined(
            f"vector store file could not be opened ({type(exc).__name__})"
        ) from exc
    try:
        identity = read_identity(conn)
    except UnusableStore:
        conn.close()
        if after_publish:
            files.write_marker("published store failed its self-check")
            raise StoreQuarantined("published vector store failed its self-check") from None
        raise
    except duckdb.Error as exc:
        conn.close()
        files.write_marker(f"self-check failed: {type(exc).__name__}")
        raise StoreQuarantined(f"vector store self-check failed ({type(exc).__name__})") from exc
    return conn, identity


_PUBLISHED = "published"


def _attached(instance: duckdb.DuckDBPyConnection, files: StoreFiles) -> duckdb.DuckDBPyConnection:
    instance.execute(f"ATTACH {sql_literal(str(files.v2))} AS {_PUBLISHED}")
    instance.execute(f"USE {_PUBLISHED}")
    instance.execute(f"SET memory_limit = '{FILE_MEMORY_LIMIT}'")
    return instance
