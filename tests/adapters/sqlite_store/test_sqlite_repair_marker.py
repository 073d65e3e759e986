"""Startup repair by marker (R-TIME-4, R-SCOPE-4, issue 15): a clean open reads no row; a
row corrupted behind the store's back is repaired once the store is marked; an upgraded
file and an unknown time-zone name still get the full repair."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apsw

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.ports.claims import RepairReport


def _fill(store: ApswClaimStore, clock: ManualClock) -> list[str]:
    drafts = [
        ClaimDraft(agent_id=agent, kind="semantic", content=f"note {i} of {agent}", scope=scope)
        for agent in ("a", "b")
        for i, scope in enumerate((Scope.agent(), Scope.user("u1"), Scope.session("s1")))
    ]
    outcomes = store.insert_many(drafts, origin=WriteOrigin.IMPORT, now=clock.now())
    return [o.claim.id for o in outcomes if o.claim is not None]


def _plans(store: ApswClaimStore, run: Callable[[], Any]) -> list[str]:
    """Every step of the query plan of every statement `run` executes on the store's
    connection."""
    statements: list[tuple[str, Any]] = []
    conn = store._conn
    conn.exec_trace = lambda _cursor, sql, bindings: bool(
        statements.append((sql, bindings)) or True
    )
    try:
        run()
    finally:
        conn.exec_trace = None
    steps = []
    for sql, bindings in statements:
        if sql.lstrip().upper().startswith(("SELECT", "WITH", "INSERT", "UPDATE", "DELETE")):
            steps += [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", bindings)]
    return steps


def test_a_clean_open_repairs_without_reading_a_row(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock
) -> None:
    """R-TIME-4, R-SCOPE-4: once a store was repaired, the next start's repair runs no
    statement whose plan scans a table of rows — zone names come from the index, one probe
    each; only the mark table (at most three rows) and the probe's own recursion are read
    whole."""
    store = open_store()
    _fill(store, clock)
    store.close()
    reopened = open_store()
    plans = _plans(reopened, lambda: reopened.repair(now=clock.now()))
    assert plans, "the repair ran no statement at all"
    scanned = {step.split()[1] for step in plans if step.startswith("SCAN")}
    assert scanned <= {"z", "agent_memory_repair_mark"}, plans
    assert any("agent_memory_timezone" in step for step in plans), plans


def test_a_row_corrupted_behind_the_stores_back_is_repaired_once_marked(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-SCOPE-4: a raw writer breaks a user row's scope behind the triggers' back; unmarked,
    the cheap start leaves it; marked (in the writer's own transaction), the repair fixes
    it from its shadow and clears the mark, so the next start is cheap again."""
    ids = _fill(store, clock)
    raw.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    raw.execute("PRAGMA ignore_check_constraints=ON")
    with raw:
        raw.execute("UPDATE agent_memory SET scope_id = NULL WHERE id = ?", (ids[1],))
    assert store.repair(now=clock.now()) == RepairReport()
    with raw:
        raw.execute("UPDATE agent_memory SET scope_id = ' ' WHERE id = ?", (ids[1],))
        raw.execute("INSERT INTO agent_memory_repair_mark (reason) VALUES ('requested')")
    report = store.repair(now=clock.now())
    assert (report.scope_fixed, report.sample_ids) == (1, (ids[1],))
    assert store.get("a", ids[1]).scope == Scope.user("u1")
    assert raw.execute("SELECT count(*) FROM agent_memory_repair_mark").fetchone() == (0,)
    assert store.repair(now=clock.now()) == RepairReport()


def test_an_upgraded_file_is_repaired_once(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-STORE-1, R-TIME-4: rows written by code older than the marker predate it, so the
    migration that brings it marks the file: the first start repairs (here an interval no
    CHECK of that schema caught), the second does not."""
    store = open_store()
    ids = _fill(store, clock)
    store.close()
    raw.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    raw.execute("PRAGMA ignore_check_constraints=ON")
    raw.execute(
        "UPDATE agent_memory SET temporal_kind = 'state', valid_from = 5, valid_until = 1,"
        " temporal_precision = 'day', temporal_timezone = 'UTC', temporal_confidence = 1.0"
        " WHERE id = ?",
        (ids[0],),
    )
    raw.execute("DROP TABLE agent_memory_repair_mark")
    raw.execute("DROP INDEX agent_memory_timezone")
    raw.execute("DELETE FROM agent_memory_schema WHERE version >= 9")
    upgraded = open_store()
    assert upgraded.repair(now=clock.now()).temporal_archived == 1
    assert upgraded.repair(now=clock.now()) == RepairReport()


def test_an_unknown_time_zone_name_still_triggers_the_repair(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-TIME-4: a zone name this Python does not know (written by one with newer tzdata)
    is found through the zone index without a mark, and its row is archived."""
    ids = _fill(store, clock)
    raw.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    raw.execute(
        "UPDATE agent_memory SET temporal_kind = 'state', valid_from = 1, valid_until = 5,"
        " temporal_precision = 'day', temporal_timezone = 'Mars/Olympus_Mons',"
        " temporal_confidence = 1.0 WHERE id = ?",
        (ids[3],),
    )
    report = store.repair(now=clock.now())
    assert (report.temporal_archived, report.sample_ids) == (1, (ids[3],))


def test_a_row_the_mirror_cannot_index_marks_the_store_and_repair_indexes_it(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-STORE-2, R-READ-3: an archived row written behind the writer's back leaves its agent
    without an FTS table; restoring it makes it recallable, and the update trigger, unable
    to create a table under a running statement, marks the store in the same transaction;
    the next start's repair re-derives the mirror and search finds the row."""
    raw.execute(
        "INSERT INTO agent_memory (id, agent_id, kind, content, canonical_content,"
        " lifecycle_state, created_at, updated_at)"
        " VALUES ('mem-raw', 'z', 'semantic', 'heron nest', 'heron nest', 'archived', 0, 0)"
    )
    assert raw.execute("SELECT count(*) FROM agent_memory_repair_mark").fetchone() == (0,)
    store.restore("z", "mem-raw", now=clock.now())
    assert raw.execute("SELECT reason FROM agent_memory_repair_mark").fetchall() == [("mirror",)]
    agent_only = ScopeFilter.agent_only()
    assert store.search_fts("z", ["heron"], scope_filter=agent_only, limit=5) == []
    assert store.repair(now=clock.now()).fts_rebuilt
    hits = store.search_fts("z", ["heron"], scope_filter=agent_only, limit=5)
    assert [hit.claim_id for hit in hits] == ["mem-raw"]
