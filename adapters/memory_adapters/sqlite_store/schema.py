"""DDL of the authoritative store: tables, CHECKs, triggers and indexes (R-STORE-1).

The temporal and scope invariants are written once as SQL predicates and used twice: as
table CHECKs, and as BEFORE INSERT/UPDATE triggers, because a CHECK cannot be added to a
table that an older schema created and the triggers must protect upgraded files as well.
Predicates are wrapped in COALESCE(…, 0) because SQLite lets a CHECK whose expression is
NULL pass, and a trigger whose WHEN is NULL would not fire.
"""

from __future__ import annotations

from memory_adapters.sql_claims import ddl
from memory_adapters.sql_claims.queries import RECALLABLE_KINDS_SQL, recallable, sql_list
from memory_adapters.sqlite_store.fts import FORGET_FUNCTION, INDEX_FUNCTION
from memory_core.domain.directives import DirectiveKind, DirectiveSource, DirectiveStatus

__all__ = [
    "CLEAR_GUARD_MESSAGE",
    "RECALLABLE_KINDS_SQL",
    "SCOPE_ERROR_MESSAGE",
    "TEMPORAL_ERROR_MESSAGE",
    "fts_statements",
    "legacy_fts_drop_statements",
    "live_slot_index",
    "recallable",
    "schema_v1_statements",
    "scope_valid",
    "shared_fts_statements",
    "temporal_valid",
]

CLEAR_GUARD_MESSAGE = "agent memory clear in progress"
TEMPORAL_ERROR_MESSAGE = "invalid agent_memory temporal metadata"
SCOPE_ERROR_MESSAGE = "invalid agent_memory scope"


_in = sql_list
# Python's str.strip() removes these too; a padded id would never equal a context's id.
_TRIM_SET = "' ' || char(9, 10, 11, 12, 13)"


live_slot_index = ddl.live_slot_index


def _trim(column: str) -> str:
    return f"trim({column}, {_TRIM_SET})"


def temporal_valid(p: str = "") -> str:
    """R-TIME-1/2 (`sql_claims.ddl`), with SQLite's column-type checks."""
    return ddl.temporal_predicate(
        p,
        trim=_trim,
        typed=(
            f"typeof({p}temporal_timezone) = 'text'",
            f"typeof({p}temporal_confidence) IN ('real', 'integer')",
            f"({p}valid_from IS NULL OR typeof({p}valid_from) = 'integer')",
            f"({p}valid_until IS NULL OR typeof({p}valid_until) = 'integer')",
        ),
        false="0",
    )


def scope_valid(p: str = "") -> str:
    """R-SCOPE-1/2 (`sql_claims.ddl`), with SQLite's column-type check."""
    return ddl.scope_predicate(
        p,
        trim=_trim,
        same=lambda a, b: f"{a} IS {b}",
        typed=(f"typeof({p}scope_id) = 'text'",),
        false="0",
    )


_SOURCES = "source_entry_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(source_entry_ids))"

_KEYS = """\
  rid INTEGER PRIMARY KEY,  -- explicit so VACUUM never renumbers the FTS mirror's rowids
  id TEXT NOT NULL UNIQUE CHECK (length(id) BETWEEN 1 AND 128),
  agent_id TEXT NOT NULL CHECK (length(agent_id) BETWEEN 1 AND 128),"""
_CLAIMS_TABLE = ddl.claims_table(
    ddl.SQLITE_SPELLING,
    keys=_KEYS,
    sources=_SOURCES,
    checks=(f"CHECK ({temporal_valid()})", f"CHECK ({scope_valid()})"),
)

_CLAIM_INDEXES = (
    *ddl.CLAIM_INDEXES,
    # Clear batches walk one agent's rows in rowid order; an index on agent_id is ordered so.
    "CREATE INDEX agent_memory_agent ON agent_memory (agent_id)",
    """CREATE INDEX agent_memory_superseded
         ON agent_memory (agent_id, superseded_by) WHERE superseded_by IS NOT NULL""",
)


_SIDE_TABLES = (
    f"""CREATE TABLE agent_memory_directive (
      agent_id TEXT NOT NULL CHECK (length(agent_id) BETWEEN 1 AND 128),
      id TEXT NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
      kind TEXT NOT NULL CHECK (kind IN {_in(DirectiveKind)}),
      status TEXT NOT NULL CHECK (status IN {_in(DirectiveStatus)}),
      source TEXT NOT NULL CHECK (source IN {_in(DirectiveSource)}),
      content TEXT NOT NULL CHECK (length(content) BETWEEN 1 AND 2000 AND content = trim(content)),
      normalized_topic TEXT CHECK (
        CASE kind WHEN 'instruction' THEN normalized_topic IS NULL
        ELSE length(normalized_topic) BETWEEN 1 AND 512
             AND normalized_topic = trim(normalized_topic)
        END),
      identity_hash TEXT NOT NULL
        CHECK (length(identity_hash) = 64 AND identity_hash NOT GLOB '*[^0-9a-f]*'),
      created_at INTEGER NOT NULL CHECK (created_at >= 0),
      updated_at INTEGER NOT NULL CHECK (updated_at >= created_at),
      PRIMARY KEY (agent_id, id),
      UNIQUE (agent_id, kind, identity_hash)
    ) WITHOUT ROWID""",
    "CREATE INDEX agent_memory_directive_order ON agent_memory_directive"
    " (agent_id, updated_at DESC, id)",
    "CREATE INDEX agent_memory_directive_status ON agent_memory_directive"
    " (agent_id, status, updated_at DESC, id)",
    # Lineage outlives its endpoints, so there are no foreign keys (R-LINEAGE-1).
    """CREATE TABLE agent_memory_derivation (
      agent_id TEXT NOT NULL,
      parent_memory_id TEXT NOT NULL,
      child_memory_id TEXT NOT NULL,
      derivation_kind TEXT NOT NULL
        CHECK (derivation_kind IN ('merge', 'reflection', 'supersede', 'manual_edit')),
      created_at INTEGER NOT NULL CHECK (created_at >= 0),
      CHECK (parent_memory_id <> child_memory_id),
      PRIMARY KEY (agent_id, parent_memory_id, child_memory_id, derivation_kind)
    ) WITHOUT ROWID""",
    "CREATE INDEX agent_memory_derivation_child ON agent_memory_derivation"
    " (agent_id, child_memory_id, created_at, parent_memory_id)",
    # Hashes only: a tombstone must never be a copy of what it forgets (R-FORGET-1).
    """CREATE TABLE agent_memory_tombstone (
      agent_id TEXT NOT NULL,
      identity_kind TEXT NOT NULL CHECK (identity_kind IN ('provenance', 'content')),
      identity_hash TEXT NOT NULL
        CHECK (length(identity_hash) = 64 AND identity_hash NOT GLOB '*[^0-9a-f]*'),
      created_at INTEGER NOT NULL CHECK (created_at >= 0),
      reason TEXT NOT NULL CHECK (reason IN ('selective_delete', 'agent_clear')),
      PRIMARY KEY (agent_id, identity_kind, identity_hash)
    ) WITHOUT ROWID""",
    """CREATE TABLE agent_memory_dirty (
      agent_id TEXT NOT NULL,
      memory_id TEXT NOT NULL,
      generation INTEGER NOT NULL CHECK (generation >= 1),
      claim_revision INTEGER NOT NULL CHECK (claim_revision >= 1),
      enqueued_at INTEGER NOT NULL CHECK (enqueued_at >= 0),
      PRIMARY KEY (agent_id, memory_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX agent_memory_dirty_queue ON agent_memory_dirty"
    " (agent_id, enqueued_at, memory_id)",
    """CREATE TABLE agent_memory_clear_job (
      agent_id TEXT NOT NULL PRIMARY KEY,
      cutoff_rowid INTEGER NOT NULL CHECK (cutoff_rowid >= 0),
      created_at INTEGER NOT NULL CHECK (created_at >= 0),
      removed_count INTEGER NOT NULL DEFAULT 0 CHECK (removed_count >= 0),
      phase TEXT NOT NULL DEFAULT 'claims' CHECK (phase IN ('claims', 'vectors'))
    ) WITHOUT ROWID""",
    # Ids, counts and closed enums only; never content (R-ARCH-6).
    """CREATE TABLE agent_memory_audit (
      id INTEGER PRIMARY KEY,
      agent_id TEXT NOT NULL,
      event_type TEXT NOT NULL,
      actor_type TEXT NOT NULL CHECK (actor_type IN ('scheduler', 'user', 'runtime', 'system')),
      memory_ref_id TEXT,
      refs_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(refs_json)),
      status TEXT NOT NULL CHECK (status IN ('completed', 'skipped', 'failed')),
      created_at INTEGER NOT NULL CHECK (created_at >= 0)
    )""",
    "CREATE INDEX agent_memory_audit_agent ON agent_memory_audit (agent_id, created_at, id)",
    "CREATE INDEX agent_memory_audit_event ON agent_memory_audit (event_type, created_at, id)",
    # A row here exists only inside a repair transaction: it lifts the clear guard for
    # that transaction and is deleted before it commits (R-SCOPE-4).
    """CREATE TABLE agent_memory_guard_suspension (
      token INTEGER PRIMARY KEY CHECK (token = 1)
    )""",
    """CREATE TABLE agent_memory_meta (
      key TEXT NOT NULL PRIMARY KEY,
      value TEXT NOT NULL
    ) WITHOUT ROWID""",
)

_DIRTY_UPSERT = """
  INSERT INTO agent_memory_dirty (agent_id, memory_id, generation, claim_revision, enqueued_at)
  VALUES ({p}.agent_id, {p}.id, 1, max(1, {p}.revision), {when})
  ON CONFLICT (agent_id, memory_id) DO UPDATE SET
    generation = generation + 1,
    claim_revision = excluded.claim_revision,
    enqueued_at = max(enqueued_at, excluded.enqueued_at);"""

_GUARD_LIFTED = "EXISTS (SELECT 1 FROM agent_memory_guard_suspension)"


def _job_for(expr: str) -> str:
    return f"EXISTS (SELECT 1 FROM agent_memory_clear_job WHERE agent_id = {expr})"


_TRIGGERS = (
    # R-FORGET-3: while a clear job exists nothing may add or change that agent's claims.
    # DELETE stays allowed so the clear itself can proceed.
    f"""CREATE TRIGGER agent_memory_clear_guard_bi BEFORE INSERT ON agent_memory
      WHEN {_job_for("NEW.agent_id")} AND NOT {_GUARD_LIFTED}
      BEGIN SELECT RAISE(ABORT, '{CLEAR_GUARD_MESSAGE}'); END""",
    f"""CREATE TRIGGER agent_memory_clear_guard_bu BEFORE UPDATE ON agent_memory
      WHEN ({_job_for("OLD.agent_id")} OR {_job_for("NEW.agent_id")}) AND NOT {_GUARD_LIFTED}
      BEGIN SELECT RAISE(ABORT, '{CLEAR_GUARD_MESSAGE}'); END""",
    f"""CREATE TRIGGER agent_memory_temporal_bi BEFORE INSERT ON agent_memory
      WHEN NOT {temporal_valid("NEW.")}
      BEGIN SELECT RAISE(ABORT, '{TEMPORAL_ERROR_MESSAGE}'); END""",
    f"""CREATE TRIGGER agent_memory_temporal_bu BEFORE UPDATE OF temporal_kind, valid_from,
        valid_until, temporal_precision, temporal_timezone, temporal_confidence ON agent_memory
      WHEN NOT {temporal_valid("NEW.")}
      BEGIN SELECT RAISE(ABORT, '{TEMPORAL_ERROR_MESSAGE}'); END""",
    f"""CREATE TRIGGER agent_memory_scope_bi BEFORE INSERT ON agent_memory
      WHEN NOT {scope_valid("NEW.")}
      BEGIN SELECT RAISE(ABORT, '{SCOPE_ERROR_MESSAGE}'); END""",
    f"""CREATE TRIGGER agent_memory_scope_bu BEFORE UPDATE OF scope_type, scope_id, user_scope
        ON agent_memory
      WHEN NOT {scope_valid("NEW.")}
      BEGIN SELECT RAISE(ABORT, '{SCOPE_ERROR_MESSAGE}'); END""",
    # R-MAINT-1 / reference §7.7: committed mutations of consolidatable kinds re-dirty a seed.
    f"""CREATE TRIGGER agent_memory_dirty_ai AFTER INSERT ON agent_memory
      WHEN NEW.kind IN {RECALLABLE_KINDS_SQL}
      BEGIN {_DIRTY_UPSERT.format(p="NEW", when="NEW.created_at")} END""",
    f"""CREATE TRIGGER agent_memory_dirty_au AFTER UPDATE OF revision, embedding_state,
        embedding_provider, embedding_model, embedding_dim ON agent_memory
      WHEN NEW.kind IN {RECALLABLE_KINDS_SQL}
      BEGIN {_DIRTY_UPSERT.format(p="NEW", when="NEW.updated_at")} END""",
    # A clear drops the agent's dirty state at its end; seeding it row by row is waste.
    f"""CREATE TRIGGER agent_memory_dirty_ad AFTER DELETE ON agent_memory
      WHEN OLD.kind IN {RECALLABLE_KINDS_SQL} AND NOT {_job_for("OLD.agent_id")}
      BEGIN {_DIRTY_UPSERT.format(p="OLD", when="OLD.updated_at")} END""",
)


def fts_statements() -> tuple[str, ...]:
    """The triggers that keep the FTS5 mirror of recallable claims in step (`fts`: one
    contentless table per owner, created by the writer's first insert for that owner).

    A row leaves its owner's table through FTS5's 'delete' command, which quotes the values
    the row was indexed with (the claim row still holds them, in OLD) — the only delete
    FTS5's `secure-delete` option applies to: each of the row's terms is removed from its
    leaf page then and there, so forgetting needs no merge of the index (a delete by rowid
    of `contentless_delete=1`, the earlier design, left every term behind a tombstone until
    a whole-index merge: seconds per delete at 1M rows, issue 15). A trigger cannot name a
    table chosen per row, so it calls `fts.FORGET_FUNCTION` / `fts.INDEX_FUNCTION`, which
    route the row to its owner's table; a connection without them cannot change claims.

    UPDATE and DELETE are mirrored by triggers, so every path that changes or removes rows —
    archive, supersede, edit, delete, retirement, repair — stays in step inside its own
    transaction. While the agent's clear runs its rows skip the index (only repair may
    change them then): the clear drops the agent's whole table (`fts.drop_step`) and its
    reads are fenced meanwhile. INSERT is mirrored by the writer (`claims.insert_batch`,
    one statement per owner after the batch's rows), in the same transaction: an FTS5
    insert run from a trigger measured ~5× slower than the same insert as its own
    statement, and insert is the hot path. A raw writer that bypasses it is caught by a
    marked startup repair, which rebuilds the mirror when its size disagrees with the
    claims.
    """
    clearing = "EXISTS (SELECT 1 FROM agent_memory_clear_job WHERE agent_id = OLD.agent_id)"
    forget, index = FORGET_FUNCTION, INDEX_FUNCTION
    return (
        f"""CREATE TRIGGER agent_memory_fts_ad AFTER DELETE ON agent_memory
          WHEN {recallable("OLD.")} AND NOT {clearing}
          BEGIN SELECT {forget}(OLD.agent_id, OLD.rid, OLD.content); END""",
        f"""CREATE TRIGGER agent_memory_fts_au AFTER UPDATE OF content, lifecycle_state,
            superseded_by, kind, agent_id ON agent_memory
          WHEN NOT {clearing}
          BEGIN
            SELECT {forget}(OLD.agent_id, OLD.rid, OLD.content) WHERE {recallable("OLD.")};
            SELECT {index}(NEW.agent_id, NEW.rid, NEW.content) WHERE {recallable("NEW.")};
          END""",
    )


def legacy_fts_drop_statements() -> tuple[str, ...]:
    """The shared FTS5 table of schema v1–v7 and its triggers, dropped (migration v8)."""
    return (
        "DROP TRIGGER IF EXISTS agent_memory_fts_au",
        "DROP TRIGGER IF EXISTS agent_memory_fts_ad",
        "DROP TABLE IF EXISTS agent_memory_fts_vocab",
        "DROP TABLE IF EXISTS agent_memory_fts",
    )


def shared_fts_statements(tokenizer: str) -> tuple[str, ...]:
    """Schema v7's mirror: one contentless FTS5 table for every agent, its rows tagged with
    a hashed owner token. Only migrations v1–v7 create it; v8 replaces it."""
    remove_old = """INSERT INTO agent_memory_fts (agent_memory_fts, rowid, content, owner)
            SELECT 'delete', OLD.rid, OLD.content, agent_memory_fts_owner(OLD.agent_id)"""
    return (
        f"""CREATE VIRTUAL TABLE agent_memory_fts USING fts5(
          content, owner, content='', tokenize='{tokenizer}')""",
        "CREATE VIRTUAL TABLE agent_memory_fts_vocab USING fts5vocab(agent_memory_fts, 'row')",
        f"""CREATE TRIGGER agent_memory_fts_ad AFTER DELETE ON agent_memory
          WHEN {recallable("OLD.")}
          BEGIN {remove_old}; END""",
        f"""CREATE TRIGGER agent_memory_fts_au AFTER UPDATE OF content, lifecycle_state,
            superseded_by, kind, agent_id ON agent_memory
          BEGIN
            {remove_old} WHERE {recallable("OLD.")};
            INSERT INTO agent_memory_fts (rowid, content, owner)
            SELECT NEW.rid, NEW.content, agent_memory_fts_owner(NEW.agent_id)
            WHERE {recallable("NEW.")};
          END""",
    )


def schema_v1_statements(tokenizer: str) -> tuple[str, ...]:
    return (
        _CLAIMS_TABLE,
        *_CLAIM_INDEXES,
        *_SIDE_TABLES,
        *_TRIGGERS,
        *shared_fts_statements(tokenizer),
    )
