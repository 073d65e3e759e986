"""DDL of the claim component: tables, named CHECKs, triggers and indexes (R-STORE-1).

PostgreSQL can add constraints to existing tables, so the temporal and scope invariants
are plain named CHECK constraints (mapped to TemporalError / ScopeError by name) rather
than the trigger pairs SQLite needs. Id, owner and scope columns use the "C" collation:
their order is code-point order, the order the contract (and Python) sort by.

There is no FTS mirror to keep in step: lexical search runs on `content` itself, served by
a pg_trgm GIN index when the extension is available (see `fts`). The clear fence and the
dirty-work index are triggers, as in SQLite, so every write path honours them; a repair
lifts the fence for its own transaction only, through a transaction-local setting.
"""

from __future__ import annotations

import psycopg

from memory_adapters.postgres_store.errors import (
    CLEAR_GUARD_SQLSTATE,
    SCOPE_CONSTRAINT,
    TEMPORAL_CONSTRAINT,
)
from memory_adapters.postgres_store.migrations import Extensions, Migration
from memory_adapters.postgres_store.projection_schema import working_statements
from memory_adapters.sql_claims import ddl
from memory_adapters.sql_claims.queries import RECALLABLE_KINDS_SQL, recallable, sql_list
from memory_adapters.sql_claims.repair import MARK_TABLE_SQL
from memory_adapters.sql_claims.vector_cleanup import TABLE_SQL as VECTOR_CLEANUP_TABLE_SQL
from memory_core.domain.directives import DirectiveKind, DirectiveSource, DirectiveStatus

__all__ = [
    "COMPONENT",
    "GUARD_SETTING",
    "MIGRATIONS",
    "OPTIONAL_EXTENSIONS",
    "RECALLABLE_KINDS_SQL",
    "recallable",
    "scope_valid",
    "temporal_valid",
]

COMPONENT = "claims"
OPTIONAL_EXTENSIONS = ("pg_trgm", "btree_gin")
# Transaction-local switch that lifts the clear guard (startup repair only, R-SCOPE-4).
GUARD_SETTING = "agent_memory.suspend_clear_guard"


_in = sql_list
_TRIM = r"E' \t\n\v\f\r'"  # the ASCII whitespace Python's strip() removes too


def _btrim(column: str) -> str:
    return f"btrim({column}, {_TRIM})"


def temporal_valid(p: str = "") -> str:
    """R-TIME-1/2 (`sql_claims.ddl`); the column types are PostgreSQL's to enforce."""
    return ddl.temporal_predicate(p, trim=_btrim, typed=(), false="false")


def scope_valid(p: str = "") -> str:
    """R-SCOPE-1/2 (`sql_claims.ddl`)."""
    return ddl.scope_predicate(
        p, trim=_btrim, same=lambda a, b: f"{a} IS NOT DISTINCT FROM {b}", typed=(), false="false"
    )


_SOURCES = "source_entry_ids text[] NOT NULL DEFAULT '{}'"

_KEYS = """\
  agent_id text COLLATE "C" NOT NULL CHECK (length(agent_id) BETWEEN 1 AND 128),
  id text COLLATE "C" NOT NULL CHECK (length(id) BETWEEN 1 AND 128),"""
_CLAIMS_TABLE = ddl.claims_table(
    ddl.POSTGRES_SPELLING,
    keys=_KEYS,
    sources=_SOURCES,
    checks=(
        "PRIMARY KEY (agent_id, id)",
        f"CONSTRAINT {TEMPORAL_CONSTRAINT} CHECK ({temporal_valid()})",
        f"CONSTRAINT {SCOPE_CONSTRAINT} CHECK ({scope_valid()})",
    ),
)

_CLAIM_INDEXES = (
    *ddl.CLAIM_INDEXES,
    # Startup repair lists distinct zones through this index instead of scanning the table.
    """CREATE INDEX agent_memory_timezone ON agent_memory (temporal_timezone)
         WHERE temporal_timezone IS NOT NULL""",
    f"""CREATE INDEX agent_memory_ready_embedding
         ON agent_memory (agent_id, embedding_provider, embedding_model, embedding_dim, id)
         WHERE embedding_state = 'ready' AND {recallable()}""",
)


def _trigram_index(extensions: Extensions) -> str | None:
    """Substring search for every script, owner first when btree_gin lets the GIN index
    hold the owner too (one index probe per agent, not one per matching row of anyone)."""
    if not extensions.has("pg_trgm"):
        return None
    columns = (
        "agent_id, content gin_trgm_ops"
        if extensions.has("btree_gin")
        else ("content gin_trgm_ops")
    )
    return f"CREATE INDEX agent_memory_trigram ON agent_memory USING gin ({columns})" + (
        f" WHERE {recallable()}"
    )


_SIDE_TABLES = (
    f"""CREATE TABLE agent_memory_directive (
      agent_id text COLLATE "C" NOT NULL CHECK (length(agent_id) BETWEEN 1 AND 128),
      id text COLLATE "C" NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
      kind text NOT NULL CHECK (kind IN {_in(DirectiveKind)}),
      status text NOT NULL CHECK (status IN {_in(DirectiveStatus)}),
      source text NOT NULL CHECK (source IN {_in(DirectiveSource)}),
      content text NOT NULL CHECK (length(content) BETWEEN 1 AND 2000),
      normalized_topic text CHECK (
        CASE kind WHEN 'instruction' THEN normalized_topic IS NULL
        ELSE length(normalized_topic) BETWEEN 1 AND 512 END),
      identity_hash text COLLATE "C" NOT NULL CHECK (identity_hash ~ '^[0-9a-f]{{64}}$'),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL CHECK (updated_at >= created_at),
      PRIMARY KEY (agent_id, id),
      UNIQUE (agent_id, kind, identity_hash)
    )""",
    "CREATE INDEX agent_memory_directive_order ON agent_memory_directive"
    " (agent_id, updated_at DESC, id)",
    # Lineage outlives its endpoints, so there are no foreign keys (R-LINEAGE-1).
    """CREATE TABLE agent_memory_derivation (
      agent_id text COLLATE "C" NOT NULL,
      parent_memory_id text COLLATE "C" NOT NULL,
      child_memory_id text COLLATE "C" NOT NULL,
      derivation_kind text NOT NULL
        CHECK (derivation_kind IN ('merge', 'reflection', 'supersede', 'manual_edit')),
      created_at timestamptz NOT NULL,
      CHECK (parent_memory_id <> child_memory_id),
      PRIMARY KEY (agent_id, parent_memory_id, child_memory_id, derivation_kind)
    )""",
    "CREATE INDEX agent_memory_derivation_child ON agent_memory_derivation"
    " (agent_id, child_memory_id, created_at, parent_memory_id)",
    # Hashes only: a tombstone must never be a copy of what it forgets (R-FORGET-1).
    """CREATE TABLE agent_memory_tombstone (
      agent_id text COLLATE "C" NOT NULL,
      identity_kind text NOT NULL CHECK (identity_kind IN ('provenance', 'content')),
      identity_hash text COLLATE "C" NOT NULL CHECK (identity_hash ~ '^[0-9a-f]{64}$'),
      created_at timestamptz NOT NULL,
      reason text NOT NULL CHECK (reason IN ('selective_delete', 'agent_clear')),
      PRIMARY KEY (agent_id, identity_kind, identity_hash)
    )""",
    """CREATE TABLE agent_memory_dirty (
      agent_id text COLLATE "C" NOT NULL,
      memory_id text COLLATE "C" NOT NULL,
      generation bigint NOT NULL CHECK (generation >= 1),
      claim_revision integer NOT NULL CHECK (claim_revision >= 1),
      enqueued_at timestamptz NOT NULL,
      PRIMARY KEY (agent_id, memory_id)
    )""",
    "CREATE INDEX agent_memory_dirty_queue ON agent_memory_dirty"
    " (agent_id, enqueued_at, memory_id)",
    """CREATE TABLE agent_memory_clear_job (
      agent_id text COLLATE "C" NOT NULL PRIMARY KEY,
      created_at timestamptz NOT NULL,
      removed_count bigint NOT NULL DEFAULT 0 CHECK (removed_count >= 0),
      phase text NOT NULL DEFAULT 'claims' CHECK (phase IN ('claims', 'vectors'))
    )""",
    # Ids, counts and closed enums only; never content (R-ARCH-6).
    """CREATE TABLE agent_memory_audit (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      agent_id text COLLATE "C" NOT NULL,
      event_type text NOT NULL,
      actor_type text NOT NULL CHECK (actor_type IN ('scheduler', 'user', 'runtime', 'system')),
      memory_ref_id text COLLATE "C",
      refs jsonb NOT NULL DEFAULT '{}',
      status text NOT NULL CHECK (status IN ('completed', 'skipped', 'failed')),
      created_at timestamptz NOT NULL
    )""",
    "CREATE INDEX agent_memory_audit_agent ON agent_memory_audit (agent_id, created_at, id)",
    "CREATE INDEX agent_memory_audit_event ON agent_memory_audit (event_type, created_at, id)",
)

_JOB_FOR = "EXISTS (SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = {})"

_FUNCTIONS = (
    # R-FORGET-3: while a clear job exists nothing may add or change that agent's claims.
    # DELETE stays allowed so the clear itself can proceed.
    f"""CREATE FUNCTION agent_memory_clear_guard() RETURNS trigger
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      IF coalesce(current_setting('{GUARD_SETTING}', true), '') = 'on' THEN
        RETURN NEW;
      END IF;
      IF {_JOB_FOR.format("NEW.agent_id")}
         OR (TG_OP = 'UPDATE' AND {_JOB_FOR.format("OLD.agent_id")}) THEN
        RAISE EXCEPTION 'agent memory clear in progress' USING ERRCODE = '{CLEAR_GUARD_SQLSTATE}';
      END IF;
      RETURN NEW;
    END $$""",
    # R-MAINT-1: committed mutations of consolidatable kinds re-dirty a seed. A clear drops
    # the agent's dirty state at its end, so its deletes do not seed anything.
    """CREATE FUNCTION agent_memory_dirty_upsert() RETURNS trigger
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    DECLARE
      rec agent_memory%ROWTYPE;
      stamp timestamptz;
    BEGIN
      IF TG_OP = 'DELETE' THEN
        rec := OLD;
        stamp := OLD.updated_at;
        IF EXISTS (SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = OLD.agent_id) THEN
          RETURN NULL;
        END IF;
      ELSE
        rec := NEW;
        stamp := CASE TG_OP WHEN 'INSERT' THEN NEW.created_at ELSE NEW.updated_at END;
      END IF;
      INSERT INTO agent_memory_dirty AS d
        (agent_id, memory_id, generation, claim_revision, enqueued_at)
      VALUES (rec.agent_id, rec.id, 1, greatest(1, rec.revision), stamp)
      ON CONFLICT (agent_id, memory_id) DO UPDATE SET
        generation = d.generation + 1,
        claim_revision = excluded.claim_revision,
        enqueued_at = greatest(d.enqueued_at, excluded.enqueued_at);
      RETURN NULL;
    END $$""",
)

_TRIGGERS = (
    """CREATE TRIGGER agent_memory_clear_guard BEFORE INSERT OR UPDATE ON agent_memory
      FOR EACH ROW EXECUTE FUNCTION agent_memory_clear_guard()""",
    f"""CREATE TRIGGER agent_memory_dirty_ai AFTER INSERT ON agent_memory
      FOR EACH ROW WHEN (NEW.kind IN {RECALLABLE_KINDS_SQL})
      EXECUTE FUNCTION agent_memory_dirty_upsert()""",
    f"""CREATE TRIGGER agent_memory_dirty_au AFTER UPDATE OF revision, embedding_state,
        embedding_provider, embedding_model, embedding_dim ON agent_memory
      FOR EACH ROW WHEN (NEW.kind IN {RECALLABLE_KINDS_SQL})
      EXECUTE FUNCTION agent_memory_dirty_upsert()""",
    f"""CREATE TRIGGER agent_memory_dirty_ad AFTER DELETE ON agent_memory
      FOR EACH ROW WHEN (OLD.kind IN {RECALLABLE_KINDS_SQL})
      EXECUTE FUNCTION agent_memory_dirty_upsert()""",
)


def _v1(conn: psycopg.Connection, extensions: Extensions) -> None:
    trigram = _trigram_index(extensions)
    statements = [
        _CLAIMS_TABLE,
        *_CLAIM_INDEXES,
        *([trigram] if trigram else []),
        *_SIDE_TABLES,
        *_FUNCTIONS,
        *_TRIGGERS,
        "CREATE TABLE agent_memory_meta (key text PRIMARY KEY, value text NOT NULL)",
    ]
    for statement in statements:
        conn.execute(statement)
    fts_index = "none" if trigram is None else ("trgm+owner" if "agent_id," in trigram else "trgm")
    conn.execute(
        "INSERT INTO agent_memory_meta (key, value) VALUES ('fts_index', %s)", (fts_index,)
    )


def _v2(conn: psycopg.Connection, extensions: Extensions) -> None:
    # The write path finds a slot's live holder by this index instead of paging the scope.
    conn.execute(ddl.live_slot_index())


def _v3(conn: psycopg.Connection, extensions: Extensions) -> None:
    # Persona drafts are rows of kind persona; which one the turn reads is this column's.
    conn.execute(ddl.PERSONA_STATE_COLUMN.replace("ADD COLUMN", "ADD COLUMN IF NOT EXISTS"))


def _v4(conn: psycopg.Connection, extensions: Extensions) -> None:
    # Startup repair runs only when this mark says so (`sql_claims.repair`, issue 15). Rows
    # this schema already holds came from older code: the first start repairs them.
    conn.execute(MARK_TABLE_SQL)
    conn.execute(
        "INSERT INTO agent_memory_repair_mark (reason) SELECT 'upgrade'"
        " WHERE EXISTS (SELECT 1 FROM agent_memory) ON CONFLICT DO NOTHING"
    )


def _v5(conn: psycopg.Connection, extensions: Extensions) -> None:
    # The stored working projection and the per-agent source generation the triggers move
    # (sql_claims.projection): the turn reads one row instead of listing 200 claims.
    for statement in working_statements():
        conn.execute(statement)


def _v6(conn: psycopg.Connection, extensions: Extensions) -> None:
    # The durable vector-cleanup queue (sql_claims.vector_cleanup, R-FORGET-1).
    conn.execute(VECTOR_CLEANUP_TABLE_SQL)


MIGRATIONS = (
    Migration(
        component=COMPONENT,
        version=1,
        description="claims, directives, lineage, tombstones, dirty, clear jobs, audit, trigram",
        apply=_v1,
    ),
    Migration(component=COMPONENT, version=2, description="index of live slot holders", apply=_v2),
    Migration(
        component=COMPONENT,
        version=3,
        description="persona states (draft, active, rejected, retired)",
        apply=_v3,
    ),
    Migration(
        component=COMPONENT,
        version=4,
        description="startup repair by marker",
        apply=_v4,
    ),
    Migration(
        component=COMPONENT,
        version=5,
        description="stored working projection with a per-agent source generation",
        apply=_v5,
    ),
    Migration(
        component=COMPONENT,
        version=6,
        description="durable vector-cleanup queue (vectors of forgotten claims)",
        apply=_v6,
    ),
)
