"""Startup repair, property-tested (R-TIME-4, R-SCOPE-4): rows corrupted behind the
triggers' and CHECKs' back are repaired without ever widening applicability, and no valid
or recoverable row is lost."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from memory_adapters.sqlite_store import ApswClaimStore, fts
from memory_adapters.sqlite_store.schema import recallable, scope_valid, temporal_valid
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.errors import ClearInProgress
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.domain.temporal import Interval, TemporalMetadata

AGENTS = ("agent-a", "agent-b")
SCOPES = {
    "agent": Scope.agent(),
    "session": Scope.session("s1"),
    "user": Scope.user("u1"),
    "project": Scope.project("p1"),
}
STATE = TemporalMetadata(
    kind="state",  # type: ignore[arg-type]
    interval=Interval(valid_from=datetime(2025, 1, 1, tzinfo=UTC)),
    precision="day",  # type: ignore[arg-type]
    timezone="UTC",
    confidence=0.9,
)
# column updates that break one invariant each, the scope type kept (a narrow row turned
# into a plausible agent row is indistinguishable from one and out of scope here)
TEMPORAL_CORRUPTIONS: list[dict[str, Any]] = [
    {
        "temporal_kind": "state",
        "valid_from": 50,
        "valid_until": 10,
        "temporal_precision": "day",
        "temporal_timezone": "UTC",
        "temporal_confidence": 0.5,
    },
    {
        "temporal_kind": "event",
        "temporal_precision": "fortnight",
        "temporal_timezone": "UTC",
        "temporal_confidence": 0.5,
    },
    {
        "temporal_kind": "plan",
        "temporal_precision": "day",
        "temporal_timezone": "Mars/Olympus",
        "temporal_confidence": 0.5,
    },
    {
        "temporal_kind": "state",
        "temporal_precision": "day",
        "temporal_timezone": "UTC",
        "temporal_confidence": 7.5,
    },
    {"temporal_kind": "atemporal", "temporal_timezone": "UTC"},
    {"temporal_kind": "someday"},
    {
        "temporal_kind": "state",
        "valid_from": "yesterday",
        "temporal_precision": "day",
        "temporal_timezone": "UTC",
        "temporal_confidence": 0.5,
    },
]
SCOPE_CORRUPTIONS: dict[str, list[dict[str, Any]]] = {
    "agent": [{"scope_id": "stray"}, {"user_scope": "stray-shadow"}],
    "user": [
        {"scope_id": None},  # recoverable from the shadow
        {"scope_id": " u1 ", "user_scope": None},  # unrecoverable
        {"user_scope": "u9"},  # shadow resynced from the id
        {"scope_type": "galaxy"},
    ],
    "session": [{"scope_id": None}, {"user_scope": "s1"}, {"scope_id": "s" * 300}],
    "project": [{"scope_id": ""}, {"user_scope": "p1"}],
}

row_spec = st.fixed_dictionaries(
    {
        "agent": st.sampled_from(AGENTS),
        "kind": st.sampled_from(["semantic", "episodic", "reflection", "persona", "working"]),
        "scope": st.sampled_from(list(SCOPES)),
        "timed": st.booleans(),
        "temporal_bug": st.none() | st.integers(0, len(TEMPORAL_CORRUPTIONS) - 1),
        "scope_bug": st.none() | st.integers(0, 9),
    }
)


def _contexts() -> list[ScopeFilter]:
    return [
        ScopeFilter.from_context(ctx)
        for ctx in (
            None,
            ScopeContext(session_id="s1"),
            ScopeContext(user_id="u1"),
            ScopeContext(project_id="p1", session_id="s1", user_id="u1"),
            ScopeContext(user_id="u9", session_id="stray"),
        )
    ]


def _visible(store: ApswClaimStore, ids: list[str]) -> dict[tuple[str, int], set[str]]:
    return {
        (agent, i): {c.id for c in store.list_applicable_by_ids(agent, ids, scope_filter=f)}
        for agent in AGENTS
        for i, f in enumerate(_contexts())
    }


def _raw(db: Path) -> apsw.Connection:
    conn = apsw.Connection(str(db))
    fts.register_functions(conn)
    return conn


def _rows(conn: apsw.Connection) -> dict[str, dict[str, Any]]:
    names = [row[1] for row in conn.execute("PRAGMA table_info(agent_memory)")]
    rows = conn.execute(f"SELECT {', '.join(names)} FROM agent_memory")
    return {row[1]: dict(zip(names, row, strict=True)) for row in rows}


def _unrecoverable(before: dict[str, Any]) -> bool:
    def ok(value: object) -> bool:
        return isinstance(value, str) and 0 < len(value) <= 256 and value == value.strip()

    kind = before["scope_type"]
    if kind == "agent":
        return False
    if kind == "user":
        return not (ok(before["scope_id"]) or ok(before["user_scope"]))
    return kind not in ("session", "project") or not ok(before["scope_id"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(row_spec, min_size=1, max_size=12), pending_clear=st.booleans())
def test_repair_never_widens_and_never_loses_a_recoverable_row(
    specs: list[dict[str, Any]], pending_clear: bool
) -> None:
    """R-TIME-4, R-SCOPE-4: valid rows are untouched; repaired rows keep their scope type
    and one of the ids they carried; only unrecoverable narrow rows are deleted (tombstoned
    and counted under a pending clear); what any context can see never grows; the FTS
    mirror matches the recallable rows afterwards; the clear guard is back on. The raw
    writer marks the store for repair, as one must (a clean store's repair reads nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "memory.sqlite3"
        clock = ManualClock()
        store = ApswClaimStore(
            db, secret_policy=PatternSecretPolicy(), clock=clock, synchronous="NORMAL"
        )
        drafts = []
        for i, spec in enumerate(specs):
            internal = spec["kind"] in ("persona", "working")
            drafts.append(
                ClaimDraft(
                    agent_id=spec["agent"],
                    kind=spec["kind"],
                    content=f"row {i} text",
                    scope=Scope.agent() if internal else SCOPES[spec["scope"]],
                    temporal=STATE if spec["timed"] and not internal else TemporalMetadata(),
                )
            )
        outcomes = store.insert_many(drafts, origin=WriteOrigin.IMPORT, now=clock.now())
        ids = [o.claim.id for o in outcomes if o.claim is not None]
        visible_before = _visible(store, ids)

        raw = _raw(db)
        raw.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
        raw.execute("PRAGMA ignore_check_constraints=ON")
        corrupted: dict[str, tuple[bool, bool]] = {}
        for outcome, spec in zip(outcomes, specs, strict=True):
            claim = outcome.claim
            if claim is None:
                continue
            updates: dict[str, Any] = {}
            if spec["temporal_bug"] is not None:
                updates.update(TEMPORAL_CORRUPTIONS[spec["temporal_bug"]])
            bugs = SCOPE_CORRUPTIONS[claim.scope.kind.value]
            if spec["scope_bug"] is not None and spec["scope_bug"] < len(bugs):
                updates.update(bugs[spec["scope_bug"]])
            if updates:
                sets = ", ".join(f"{column} = :{column}" for column in updates)
                raw.execute(
                    f"UPDATE agent_memory SET {sets} WHERE id = :id", {**updates, "id": claim.id}
                )
                corrupted[claim.id] = (
                    spec["temporal_bug"] is not None,
                    any(k in updates for k in ("scope_type", "scope_id", "user_scope")),
                )
        if pending_clear:
            raw.execute(
                "INSERT INTO agent_memory_clear_job (agent_id, cutoff_rowid, created_at)"
                " VALUES ('agent-b', 0, 0)"
            )
        raw.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 1)
        raw.execute("PRAGMA ignore_check_constraints=OFF")
        raw.execute("INSERT INTO agent_memory_repair_mark (reason) VALUES ('requested')")
        before = _rows(raw)

        report = store.repair(now=clock.now())
        after = _rows(raw)

        deleted = set(before) - set(after)
        assert deleted == {cid for cid in corrupted if _unrecoverable(before[cid])}
        for cid, row in before.items():
            if cid not in corrupted:
                assert after[cid] == row  # a valid row is never altered
                continue
            if cid in deleted:
                continue
            fixed = after[cid]
            assert fixed["scope_type"] == row["scope_type"]
            if fixed["scope_type"] != "agent":
                assert fixed["scope_id"] in (row["scope_id"], row["user_scope"])
            temporal_bug, _scope_bug = corrupted[cid]
            if temporal_bug and row["kind"] not in ("persona", "working"):
                assert fixed["lifecycle_state"] == "archived"
            if temporal_bug and row["kind"] in ("persona", "working"):
                assert fixed["temporal_kind"] == "atemporal"
        ok = raw.execute(
            f"SELECT count(*) FROM agent_memory WHERE NOT {temporal_valid()} OR NOT {scope_valid()}"
        ).fetchone()[0]
        assert ok == 0
        if not pending_clear:
            for cid, row in after.items():  # every surviving row reads back as a valid claim
                assert store.get(row["agent_id"], cid).id == cid
        visible_after = _visible(store, ids)
        for key, seen in visible_after.items():
            assert seen <= visible_before[key]  # applicability never widens
        # Outside a pending clear: its agent's index is fenced, and the clear drops it.
        settled = "agent_id NOT IN (SELECT agent_id FROM agent_memory_clear_job)"
        cleared = {fts.owner_table("agent-b")} if pending_clear else set()
        mirrored = {
            rowid
            for table in set(fts.owner_tables(raw)) - cleared
            for (rowid,) in raw.execute(f"SELECT rowid FROM {table}")
        }
        wanted = {
            r
            for (r,) in raw.execute(
                f"SELECT rid FROM agent_memory WHERE {recallable()} AND {settled}"
            )
        }
        assert mirrored == wanted
        assert raw.execute("SELECT count(*) FROM agent_memory_guard_suspension").fetchone()[0] == 0
        deleted_b = [cid for cid in deleted if before[cid]["agent_id"] == "agent-b"]
        if pending_clear:
            (removed,) = raw.execute(
                "SELECT removed_count FROM agent_memory_clear_job WHERE agent_id = 'agent-b'"
            ).fetchone()
            assert removed == len(deleted_b)
            claims_b = [c for c in deleted_b if before[c]["kind"] not in ("persona", "working")]
            assert report.clear_tombstoned == len(claims_b)
            try:
                store.insert(
                    ClaimDraft(agent_id="agent-b", kind="semantic", content="later"),
                    origin=WriteOrigin.USER_ADD,
                    now=clock.now(),
                )
            except ClearInProgress:
                pass
            else:
                raise AssertionError("the clear guard must be back on after repair")
        assert report.scope_deleted == len(deleted)
        raw.close()
        store.close()
