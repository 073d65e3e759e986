"""Schema, migrations and per-connection settings of the apsw store (R-STORE-1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from memory_adapters.sqlite_store import ApswClaimStore, fts
from memory_adapters.sqlite_store.connection import translate_errors
from memory_adapters.sqlite_store.migrations import LATEST_VERSION
from memory_adapters.sqlite_store.schema import (
    legacy_fts_drop_statements,
    shared_fts_statements,
)
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.errors import ScopeError, StoreError, TemporalError
from memory_core.domain.scope import Scope, ScopeFilter


def test_fresh_file_records_every_migration_once(
    store: ApswClaimStore, open_store: Callable[..., ApswClaimStore], raw: apsw.Connection
) -> None:
    """R-STORE-1: versioned migrations recorded in a schema table; reopening re-applies none."""
    store.close()
    open_store().close()
    versions = raw.execute("SELECT version FROM agent_memory_schema ORDER BY version").fetchall()
    assert versions == [(v,) for v in range(1, LATEST_VERSION + 1)]


def test_a_file_from_newer_code_is_refused(
    store: ApswClaimStore, open_store: Callable[..., ApswClaimStore], raw: apsw.Connection
) -> None:
    """R-STORE-1: a downgrade is refused with a typed error instead of guessed at."""
    store.close()
    raw.execute("INSERT INTO agent_memory_schema VALUES (?, 'future', 0)", (LATEST_VERSION + 1,))
    with pytest.raises(StoreError, match="newer"):
        open_store()


def test_connection_runs_wal_with_foreign_keys_and_secure_delete(
    store: ApswClaimStore, db_path: Path, clock
) -> None:
    """R-STORE-1: WAL, foreign keys on, secure_delete on, FTS5 secure-delete on in the
    owner's table the first insert created."""
    store.insert(
        ClaimDraft(agent_id="a", kind="semantic", content="indexed"),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    conn = store._conn  # the store's own connection: these are per-connection settings
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    table = fts.owner_table("a")
    config = dict(conn.execute(f"SELECT k, v FROM {table}_config").fetchall())
    assert config.get("secure-delete") == 1


def test_fts_mirror_uses_the_trigram_tokenizer_when_available(raw: apsw.Connection) -> None:
    """R-STORE-1: trigram where available (this build has it), recorded in the meta table."""
    assert raw.execute(
        "SELECT value FROM agent_memory_meta WHERE key = 'fts_tokenizer'"
    ).fetchone() == ("trigram",)


_RAW_INSERT = """INSERT INTO agent_memory (id, agent_id, kind, content, canonical_content,
    temporal_kind, valid_from, valid_until, temporal_precision, temporal_timezone,
    temporal_confidence, scope_type, scope_id, user_scope, created_at, updated_at)
  VALUES (:id, 'a', 'semantic', 'x', 'x', :tk, :vf, :vu, :tp, :tz, :tc, :st, :sid, :us, 0, 0)"""

_VALID = {
    "id": "r1",
    "tk": "atemporal",
    "vf": None,
    "vu": None,
    "tp": None,
    "tz": None,
    "tc": None,
    "st": "agent",
    "sid": None,
    "us": None,
}

_BAD_TEMPORAL = [
    {"tk": "state", "tp": "day", "tz": "UTC", "tc": 0.9, "vf": 10, "vu": 10},  # empty interval
    {"tk": "state", "tp": "day", "tz": "UTC", "tc": None},  # no confidence
    {"tk": "event", "tp": "fortnight", "tz": "UTC", "tc": 0.5},  # unknown precision
    {"tk": "plan", "tp": "day", "tz": " UTC", "tc": 0.5},  # padded zone
    {"tk": "state", "tp": "day", "tz": "UTC", "tc": 1.5},  # confidence out of range
    {"tk": "atemporal", "tc": 0.5},  # atemporal carrying a field
    {"tk": "someday"},  # unknown kind
    {"tk": "state", "tp": "day", "tz": "UTC", "tc": 0.5, "vf": "yesterday"},  # not epoch ms
]
_BAD_SCOPE = [
    {"st": "agent", "sid": "stray"},
    {"st": "agent", "us": "stray-shadow"},
    {"st": "session", "sid": None},
    {"st": "session", "sid": " s1"},
    {"st": "session", "sid": "s1", "us": "s1"},
    {"st": "user", "sid": "u1", "us": None},
    {"st": "user", "sid": "u1", "us": "u2"},
    {"st": "project", "sid": "p" * 257},
    {"st": "galaxy", "sid": "g1"},
]


@pytest.mark.parametrize("bad", _BAD_TEMPORAL)
def test_trigger_refuses_invalid_temporal_metadata(raw: apsw.Connection, bad: dict) -> None:
    """R-TIME-1/2 + R-STORE-1: a BEFORE INSERT trigger enforces the temporal invariants."""
    with pytest.raises(apsw.ConstraintError, match="invalid agent_memory temporal metadata"):
        raw.execute(_RAW_INSERT, {**_VALID, **bad})


@pytest.mark.parametrize("bad", _BAD_SCOPE)
def test_trigger_refuses_invalid_scope_pairs(raw: apsw.Connection, bad: dict) -> None:
    """R-SCOPE-1/2 + R-STORE-1: a BEFORE INSERT trigger enforces the scope invariants."""
    with pytest.raises(apsw.ConstraintError, match="invalid agent_memory scope"):
        raw.execute(_RAW_INSERT, {**_VALID, **bad})


@pytest.mark.parametrize("bad", _BAD_TEMPORAL + _BAD_SCOPE)
def test_table_checks_hold_even_with_triggers_disabled(raw: apsw.Connection, bad: dict) -> None:
    """R-STORE-1: the same invariants are table CHECKs, so they hold without the triggers."""
    raw.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    with pytest.raises(apsw.ConstraintError, match="CHECK"):
        raw.execute(_RAW_INSERT, {**_VALID, **bad})


def test_the_valid_baseline_row_is_accepted(raw: apsw.Connection) -> None:
    """Guards the two tests above: their only difference from success is the bad field."""
    raw.execute(_RAW_INSERT, _VALID)
    assert raw.execute("SELECT count(*) FROM agent_memory").fetchone() == (1,)


def test_store_translates_trigger_aborts_into_domain_errors(
    store: ApswClaimStore, raw: apsw.Connection, clock
) -> None:
    """R-STORE-1: an apsw constraint abort leaves the adapter as a typed domain error."""
    outcome = store.insert(
        ClaimDraft(agent_id="a", kind="semantic", content="x"),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    assert outcome.claim is not None
    with pytest.raises(TemporalError), translate_errors():
        store._conn.execute("UPDATE agent_memory SET temporal_kind = 'state'")
    with pytest.raises(ScopeError), translate_errors():
        store._conn.execute("UPDATE agent_memory SET scope_type = 'session'")


def test_side_tables_refuse_plaintext_and_self_edges(raw: apsw.Connection) -> None:
    """R-FORGET-1, R-LINEAGE-1: tombstones hold a 64-hex hash only; lineage has no self-edge."""
    with pytest.raises(apsw.ConstraintError):
        raw.execute(
            "INSERT INTO agent_memory_tombstone VALUES ('a', 'content', 'my secret text', 0,"
            " 'selective_delete')"
        )
    with pytest.raises(apsw.ConstraintError):
        raw.execute("INSERT INTO agent_memory_derivation VALUES ('a', 'm1', 'm1', 'merge', 0)")
    tables = {
        name: without_rowid
        for name, without_rowid in raw.execute(
            "SELECT name, sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE type = 'table'"
        )
    }
    assert tables["agent_memory_derivation"] and tables["agent_memory_tombstone"]
    fks = raw.execute("PRAGMA foreign_key_list(agent_memory_derivation)").fetchall()
    assert fks == []


def test_scoped_recall_query_uses_the_scoped_index(store: ApswClaimStore) -> None:
    """R-READ-3: the per-scope candidate branch is an index range scan, not a table scan."""
    plan = store._conn.execute(
        """EXPLAIN QUERY PLAN SELECT m.rid FROM agent_memory m
           WHERE m.agent_id = 'a' AND m.scope_type = 'agent' AND m.scope_id IS NULL
             AND (m.lifecycle_state = 'active' AND m.superseded_by IS NULL
                  AND m.kind IN ('episodic', 'semantic', 'reflection'))
           ORDER BY m.importance DESC, m.created_at DESC, m.id LIMIT 10"""
    ).fetchall()
    assert any("agent_memory_scoped_recall" in str(row) for row in plan), plan


def test_a_file_with_the_early_insert_trigger_is_migrated_to_single_indexing(
    store: ApswClaimStore, open_store: Callable[..., ApswClaimStore], raw: apsw.Connection, clock
) -> None:
    """R-STORE-1: migrations bring an older file forward; the first v1 build's FTS insert
    trigger is dropped, so a new claim is indexed exactly once."""
    store.close()
    _back_to_the_shared_mirror(raw)
    raw.execute(
        """CREATE TRIGGER agent_memory_fts_ai AFTER INSERT ON agent_memory BEGIN
             INSERT INTO agent_memory_fts (rowid, content, owner)
             VALUES (NEW.rid, NEW.content, agent_memory_fts_owner(NEW.agent_id)); END"""
    )
    raw.execute("DELETE FROM agent_memory_schema WHERE version >= 3")
    reopened = open_store()
    reopened.insert(
        ClaimDraft(agent_id="a", kind="semantic", content="indexed once"),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    assert fts.mirror_counts(raw) == {fts.owner_table("a"): 1}
    triggers = {n for (n,) in raw.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
    assert "agent_memory_fts_ai" not in triggers


@pytest.mark.parametrize("scope", [Scope.agent(), Scope.session("s1")])
def test_slot_lookup_is_an_index_search_of_live_holders(
    store: ApswClaimStore, scope: Scope
) -> None:
    """R-SCOPE-3, R-STORE-1: `find_live_by_slot` runs one statement, answered by the partial
    index of live slot holders in slot order — no table scan, no sort."""
    statements: list[tuple[str, object]] = []
    store._conn.exec_trace = lambda _cursor, sql, bindings: bool(
        statements.append((sql, bindings)) or True
    )
    try:
        assert store.find_live_by_slot("a", scope, "user.home_city") is None
    finally:
        store._conn.exec_trace = None
    ((sql, bindings),) = statements
    plan = [row[3] for row in store._conn.execute(f"EXPLAIN QUERY PLAN {sql}", bindings)]
    assert any("USING INDEX agent_memory_live_slot" in step for step in plan), plan
    assert not any("TEMP B-TREE" in step or step.startswith("SCAN m") for step in plan), plan


def test_a_version_three_file_gains_the_live_slot_index(
    store: ApswClaimStore, open_store: Callable[..., ApswClaimStore], raw: apsw.Connection
) -> None:
    """R-STORE-1: migration 4 brings an older file's slot lookups onto the index."""
    store.close()
    raw.execute("DROP INDEX agent_memory_live_slot")
    raw.execute("DELETE FROM agent_memory_schema WHERE version >= 4")
    open_store().close()
    indexes = {n for (n,) in raw.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "agent_memory_live_slot" in indexes


def test_a_version_five_mirror_is_re_created_with_secure_deletes(
    store: ApswClaimStore, open_store: Callable[..., ApswClaimStore], raw: apsw.Connection, clock
) -> None:
    """R-STORE-1, R-FORGET-1: a v5 file's mirror (`contentless_delete=1`, deleted by rowid,
    so its terms stayed until a whole-index merge) is re-created by migration 6 as a
    secure-delete mirror, re-indexed from the claims: recall finds the same rows, and a
    delete takes its terms out of the index at once."""
    for content in ("jasmine tea at breakfast", "kayaking on the river"):
        store.insert(
            ClaimDraft(agent_id="a", kind="semantic", content=content),
            origin=WriteOrigin.EXTRACTION,
            now=clock.now(),
        )
    store.close()
    _back_to_the_shared_mirror(raw)
    for statement in legacy_fts_drop_statements():
        raw.execute(statement)
    raw.execute(
        """CREATE VIRTUAL TABLE agent_memory_fts USING fts5(content, owner, content='',
             contentless_delete=1, tokenize='trigram')"""
    )
    raw.execute(
        """CREATE TRIGGER agent_memory_fts_ad AFTER DELETE ON agent_memory
             BEGIN DELETE FROM agent_memory_fts WHERE rowid = OLD.rid; END"""
    )
    raw.execute(
        """INSERT INTO agent_memory_fts (rowid, content, owner)
             SELECT rid, content, agent_memory_fts_owner(agent_id) FROM agent_memory"""
    )
    raw.execute("DELETE FROM agent_memory_schema WHERE version >= 6")
    reopened = open_store()
    table = fts.owner_table("a")
    (sql,) = raw.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    assert "contentless_delete" not in sql
    hits = reopened.search_fts("a", ["jasmine"], scope_filter=ScopeFilter.agent_only(), limit=5)
    assert len(hits) == 1
    reopened.delete("a", hits[0].claim_id, now=clock.now())
    terms = {term for (term,) in raw.execute(f"SELECT term FROM {table}_vocab")}
    assert "jas" not in terms and "kay" in terms
    assert fts.mirror_counts(raw) == {table: 1}


def _back_to_the_shared_mirror(raw: apsw.Connection) -> None:
    """Turn a current file's mirror back into schema v7's shared table (for the tests of
    the migrations before v8, which re-apply from an older version)."""
    fts.drop_all(raw)
    for statement in (*legacy_fts_drop_statements(), *shared_fts_statements("trigram")):
        raw.execute(statement)
    raw.execute(
        """INSERT INTO agent_memory_fts (rowid, content, owner)
             SELECT rid, content, agent_memory_fts_owner(agent_id) FROM agent_memory"""
    )


def test_a_version_seven_file_moves_to_one_index_per_owner(
    store: ApswClaimStore, open_store: Callable[..., ApswClaimStore], raw: apsw.Connection, clock
) -> None:
    """R-STORE-1, R-SCOPE-1: migration 8 moves a v7 file's shared index into one table per
    owner, re-indexed from the claims: each agent finds its own rows and only those, and the
    shared table is gone."""
    for agent in ("a", "b"):
        for content in (f"jasmine tea of {agent}", "kayaking on the river"):
            store.insert(
                ClaimDraft(agent_id=agent, kind="semantic", content=content),
                origin=WriteOrigin.EXTRACTION,
                now=clock.now(),
            )
    store.close()
    _back_to_the_shared_mirror(raw)
    raw.execute("DELETE FROM agent_memory_schema WHERE version >= 8")
    reopened = open_store()
    names = {n for (n,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "agent_memory_fts" not in names
    assert set(fts.owner_tables(raw)) == {fts.owner_table("a"), fts.owner_table("b")}
    for agent in ("a", "b"):
        hits = reopened.search_fts(
            agent, ["jasmine"], scope_filter=ScopeFilter.agent_only(), limit=5
        )
        assert [reopened.get(agent, hit.claim_id).content for hit in hits] == [
            f"jasmine tea of {agent}"
        ]
