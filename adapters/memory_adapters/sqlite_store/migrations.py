"""Versioned schema migrations: applied in order, each in one transaction, recorded in
`agent_memory_schema` (R-STORE-1). A file newer than this code is refused, not guessed at."""

from __future__ import annotations

import logging
from collections.abc import Callable

import apsw
import attrs

from memory_adapters.sql_claims import ddl
from memory_adapters.sql_claims.queries import recallable
from memory_adapters.sql_claims.repair import MARK_TABLE_SQL
from memory_adapters.sql_claims.vector_cleanup import TABLE_SQL as VECTOR_CLEANUP_TABLE_SQL
from memory_adapters.sqlite_store import fts
from memory_adapters.sqlite_store.connection import write_transaction
from memory_adapters.sqlite_store.projection_schema import working_statements
from memory_adapters.sqlite_store.schema import (
    fts_statements,
    legacy_fts_drop_statements,
    live_slot_index,
    schema_v1_statements,
    shared_fts_statements,
)
from memory_core.domain.errors import StoreError

__all__ = [
    "LATEST_VERSION",
    "MIGRATIONS",
    "Migration",
    "migrate",
    "probe_tokenizer",
    "schema_version",
]

_log = logging.getLogger(__name__)

_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS agent_memory_schema (
  version INTEGER PRIMARY KEY CHECK (version >= 1),
  description TEXT NOT NULL,
  applied_at INTEGER NOT NULL CHECK (applied_at >= 0)
)"""


def probe_tokenizer(conn: apsw.Connection) -> str:
    """`trigram` when this SQLite has it (substring matching for any script), else
    `unicode61`. FTS5 itself is required."""
    for tokenizer in ("trigram", "unicode61"):
        try:
            conn.execute(
                "CREATE VIRTUAL TABLE temp.agent_memory_probe"
                f" USING fts5(x, tokenize='{tokenizer}')"
            )
        except apsw.SQLError:
            continue
        conn.execute("DROP TABLE temp.agent_memory_probe")
        return tokenizer
    raise StoreError("this SQLite build has no FTS5")


def _v1(conn: apsw.Connection) -> None:
    tokenizer = probe_tokenizer(conn)
    for statement in schema_v1_statements(tokenizer):
        conn.execute(statement)
    conn.execute(
        "INSERT INTO agent_memory_meta (key, value) VALUES ('fts_tokenizer', ?)", (tokenizer,)
    )


def _v2(conn: apsw.Connection) -> None:
    # Extraction cursors live beside the claims they produced, so a crash can never leave a
    # cursor ahead of the claims it vouches for in another file.
    conn.execute(
        """CREATE TABLE agent_memory_cursor (
             session_id TEXT PRIMARY KEY CHECK (length(session_id) BETWEEN 1 AND 256),
             order_seq INTEGER NOT NULL CHECK (order_seq >= 0),
             updated_at INTEGER NOT NULL CHECK (updated_at >= 0)
           ) WITHOUT ROWID"""
    )


def _v3(conn: apsw.Connection) -> None:
    # Files from the first v1 build mirrored inserts into FTS by a trigger; the writer does it
    # now (see schema.shared_fts_statements), and both together would index each row twice.
    conn.execute("DROP TRIGGER IF EXISTS agent_memory_fts_ai")


def _v4(conn: apsw.Connection) -> None:
    # The write path finds a slot's live holder by this index instead of paging the scope.
    conn.execute(live_slot_index())


def _v5(conn: apsw.Connection) -> None:
    # Cursors were keyed by session only, so a second agent on one conversation never
    # extracted it. A v2 row does not say whose it was: it goes to every agent holding claims
    # extracted from that session (they are the ones who advanced it); any other agent starts
    # that session from the beginning, which is what it never got to do.
    conn.execute(
        """CREATE TABLE IF NOT EXISTS agent_memory_extract_cursor (
             agent_id TEXT NOT NULL CHECK (length(agent_id) BETWEEN 1 AND 128),
             session_id TEXT NOT NULL CHECK (length(session_id) BETWEEN 1 AND 256),
             order_seq INTEGER NOT NULL CHECK (order_seq >= 0),
             fragment_offset INTEGER NOT NULL CHECK (fragment_offset >= 0),
             failures INTEGER NOT NULL CHECK (failures >= 0),
             updated_at INTEGER NOT NULL CHECK (updated_at >= 0),
             PRIMARY KEY (agent_id, session_id)
           ) WITHOUT ROWID"""
    )
    legacy = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agent_memory_cursor'"
    ).fetchone()
    if legacy is None:  # re-applied over a file that already moved (a repaired version row)
        return
    conn.execute(
        """INSERT OR IGNORE INTO agent_memory_extract_cursor
             (agent_id, session_id, order_seq, fragment_offset, failures, updated_at)
           SELECT DISTINCT m.agent_id, c.session_id, c.order_seq, 0, 0, c.updated_at
             FROM agent_memory_cursor AS c
             JOIN agent_memory AS m ON m.source_session = c.session_id"""
    )
    conn.execute("DROP TABLE agent_memory_cursor")


def _v6(conn: apsw.Connection) -> None:
    # Persona drafts are rows of kind persona; which one the turn reads is this column's.
    columns = {row[1] for row in conn.execute("PRAGMA table_info(agent_memory)")}
    if "persona_state" not in columns:  # re-applied over a file that already has it
        conn.execute(ddl.PERSONA_STATE_COLUMN)


def _v7(conn: apsw.Connection) -> None:
    # The mirror was contentless_delete=1, whose deletes by rowid leave the row's terms in
    # the index until a whole-index merge (schema.shared_fts_statements): re-created as a plain
    # contentless table whose secure deletes remove them at once, and re-indexed from the
    # claims. The old table's pages are freed under secure_delete, so zeroed.
    tokenizer = conn.execute(
        "SELECT value FROM agent_memory_meta WHERE key = 'fts_tokenizer'"
    ).fetchone()[0]
    for statement in (*legacy_fts_drop_statements(), *shared_fts_statements(str(tokenizer))):
        conn.execute(statement)
    conn.execute(
        f"""INSERT INTO agent_memory_fts (rowid, content, owner)
            SELECT rid, content, agent_memory_fts_owner(agent_id) FROM agent_memory
            WHERE {recallable()}"""
    )


def _v8(conn: apsw.Connection) -> None:
    # One shared index made every agent's search and delete walk other agents' posting
    # lists (issue 15): the mirror becomes one table per owner (`fts`), re-derived from the
    # claims; the shared table's pages are freed under secure_delete, so zeroed.
    for statement in (*legacy_fts_drop_statements(), *fts_statements()):
        conn.execute(statement)
    fts.rebuild(conn)


def _v9(conn: apsw.Connection) -> None:
    # Startup repair scanned every row on every open (0.36 s at 100k, issue 15): it now runs
    # only when this mark says so (`sql_claims.repair`), and finds the zone names through an
    # index. Rows this file already holds came from older code: the first open repairs them.
    conn.execute(MARK_TABLE_SQL)
    conn.execute(
        "INSERT OR IGNORE INTO agent_memory_repair_mark (reason)"
        " SELECT 'upgrade' WHERE EXISTS (SELECT 1 FROM agent_memory)"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS agent_memory_timezone ON agent_memory (temporal_timezone)"
    )


def _v10(conn: apsw.Connection) -> None:
    # The stored working projection and the per-agent source generation the triggers move
    # (sql_claims.projection): the turn reads one row instead of listing 200 claims.
    for statement in working_statements():
        conn.execute(statement)


def _v11(conn: apsw.Connection) -> None:
    # The durable vector-cleanup queue (sql_claims.vector_cleanup): a vector of a claim
    # forgotten while its embedding was in flight no longer outlives a failed or cut
    # cleanup, nor a kill (R-FORGET-1). A file from older code may hold such orphans
    # already: the next warm-up of each agent still deletes them by coverage.
    conn.execute(VECTOR_CLEANUP_TABLE_SQL)


@attrs.frozen(kw_only=True)
class Migration:
    version: int
    description: str
    apply: Callable[[apsw.Connection], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        description="claims, directives, lineage, tombstones, dirty, clear jobs, audit, FTS5",
        apply=_v1,
    ),
    Migration(version=2, description="per-session extraction cursors", apply=_v2),
    Migration(
        version=3, description="FTS inserts mirrored by the writer, not a trigger", apply=_v3
    ),
    Migration(version=4, description="index of live slot holders", apply=_v4),
    Migration(
        version=5,
        description="extraction cursors per (agent, session), with fragment progress",
        apply=_v5,
    ),
    Migration(
        version=6, description="persona states (draft, active, rejected, retired)", apply=_v6
    ),
    Migration(
        version=7,
        description="FTS mirror with secure deletes: forgetting removes the terms at once",
        apply=_v7,
    ),
    Migration(
        version=8,
        description="FTS mirror of one table per owner: search and delete cost the owner's rows",
        apply=_v8,
    ),
    Migration(
        version=9,
        description="startup repair by marker; time-zone names by index",
        apply=_v9,
    ),
    Migration(
        version=10,
        description="stored working projection with a per-agent source generation",
        apply=_v10,
    ),
    Migration(
        version=11,
        description="durable vector-cleanup queue (vectors of forgotten claims)",
        apply=_v11,
    ),
)
LATEST_VERSION = MIGRATIONS[-1].version


def schema_version(conn: apsw.Connection) -> int:
    conn.execute(_VERSION_TABLE)
    row = conn.execute("SELECT max(version) FROM agent_memory_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: apsw.Connection, *, now_ms: int) -> int:
    """Bring the file to LATEST_VERSION; returns the version it started at."""
    with write_transaction(conn):
        start = schema_version(conn)
    if start > LATEST_VERSION:
        raise StoreError(
            f"schema version {start} is newer than this code ({LATEST_VERSION}); downgrade refused"
        )
    for migration in MIGRATIONS:
        if migration.version <= start:
            continue
        # The version is re-read inside the transaction: two processes opening one file at
        # once must not both apply a migration.
        with write_transaction(conn):
            if schema_version(conn) >= migration.version:
                continue
            migration.apply(conn)
            conn.execute(
                "INSERT INTO agent_memory_schema (version, description, applied_at)"
                " VALUES (?, ?, ?)",
                (migration.version, migration.description, now_ms),
            )
        _log.info("sqlite store migrated to schema version %d", migration.version)
    return start
