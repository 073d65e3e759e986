"""Create-or-open for one agent: the decision tree of reference §6, run in a worker thread.

0. quarantine marker ⇒ delete every store file, the marker last, then start fresh;
1. staging files are never a commit point ⇒ deleted;
2. a v2 file ⇒ open it (authoritative even with a residual WAL), sweep v1 best-effort; a file
   that opens but fails the self-check is replaced by a fresh store; a native open failure
   quarantines (marker written, no retry in this process); a scrub marker beside it (deletes
   a kill kept from their rewrite) ⇒ the file is compacted before it is used;
3. v1 with a WAL ⇒ v1 deleted unopened, an empty v2 published;
4. v1 alone ⇒ the one-time migration;
5. an orphan v2 WAL ⇒ deleted;
6. nothing ⇒ an empty v2 published.

Creation needs an identity (it fixes the array dimension). Without one, opening only finds:
it returns None where it would have had to create or migrate.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import duckdb

from memory_core.domain.claims import EmbeddingIdentity

from .files import OpenStep, StoreFiles, fsync_directory, plan_open, remove_quietly
from .guard import AbortFlag
from .migrate_v1 import migrate_v1
from .publish import StepHook, compact, open_v2, publish
from .schema import UnusableStore, connect, create_schema

__all__ = ["Opened", "create_in_memory", "open_files", "republish"]

_log = logging.getLogger(__name__)

Opened = tuple[duckdb.DuckDBPyConnection, EmbeddingIdentity]
Bind = Callable[[duckdb.DuckDBPyConnection | None], None]


def open_files(
    files: StoreFiles,
    identity: EmbeddingIdentity | None,
    *,
    page_size: int,
    abort: AbortFlag,
    on_step: StepHook,
    bind: Bind,
) -> Opened | None:
    """Open (or, given an identity, create or migrate) the agent's v2 store."""
    step = plan_open(files)
    if step is OpenStep.RECOVER_QUARANTINE:
        _log.warning("recovering quarantined vector store %s: starting empty", files.stem)
        remove_quietly(*files.store_files())
        fsync_directory(files.root)
        # The marker goes last, so a crash during the wipe repeats the wipe.
        remove_quietly(files.marker)
        fsync_directory(files.root)
        step = OpenStep.PUBLISH_FRESH
    remove_quietly(files.staging, files.staging_wal)
    abort.check()
    if step is OpenStep.OPEN_V2:
        try:
            opened = open_v2(files, after_publish=False)
        except UnusableStore:
            if identity is None:
                return None
            _log.warning("vector store %s failed its self-check: replacing it", files.stem)
            return republish(files, identity, abort=abort, on_step=on_step, bind=bind)
        remove_quietly(files.v1, files.v1_wal)
        if files.scrub.exists():
            conn, found = opened
            conn.close()
            compact(files, found, abort=abort, on_step=on_step, bind=bind)
            return open_v2(files, after_publish=True)
        return opened
    if step is OpenStep.PUBLISH_FRESH:
        remove_quietly(files.v2_wal)  # an orphan WAL without its database
    if identity is None:
        return None
    if step is OpenStep.MIGRATE_V1:
        migrate_v1(files, identity, page_size=page_size, abort=abort, on_step=on_step, bind=bind)
        return open_v2(files, after_publish=True)
    if step is OpenStep.DISCARD_V1:
        _log.warning("legacy vector store %s was mid-write: starting empty", files.stem)
        remove_quietly(files.v1, files.v1_wal)
    return republish(files, identity, abort=abort, on_step=on_step, bind=bind)


def republish(
    files: StoreFiles,
    identity: EmbeddingIdentity,
    *,
    abort: AbortFlag,
    on_step: StepHook,
    bind: Bind,
) -> Opened:
    """Publish a fresh, empty v2 store (replacing any) and open it. Legacy files go too,
    the scrub marker and the snapshot: the file they stood for is gone."""
    # One DuckDB instance builds the file and then holds it open (see `open_v2`).
    instance = connect(None)
    try:
        publish(files, identity, abort=abort, on_step=on_step, bind=bind, instance=instance)
        remove_quietly(files.v1, files.v1_wal, files.scrub, files.snapshot)
        return open_v2(files, after_publish=True, instance=instance)
    except BaseException:
        instance.close()
        raise


def create_in_memory(identity: EmbeddingIdentity) -> Opened:
    """A private in-memory database with the v2 schema (the non-persistent mode)."""
    conn = connect(None)
    conn.execute("BEGIN")
    create_schema(conn, identity)
    conn.execute("COMMIT")
    return conn, identity
