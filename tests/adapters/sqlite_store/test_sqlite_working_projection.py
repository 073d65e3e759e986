"""The stored working projection on SQLite, and the same rule on the fake (R-STORE-2,
R-READ-9, R-MAINT-3, R-FORGET-1).

Rebuild-and-compare, property-tested: after any sequence of claim mutations, clock moves
and rebuilds, a stored snapshot the turn would accept is exactly what `project_working`
gives over the authoritative claims at that instant, and a rebuild (also after the row is
dropped) stores exactly that. Forensic: a deleted claim's text leaves the working row in
the delete's own transaction, so the checkpoint leaves it in no file.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from memory_adapters.offload import InlineCalls
from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, ClaimKind, WriteOrigin
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.errors import AgentMemoryError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.domain.temporal_policy import TemporalPolicy
from memory_core.services.read.projections import project_working
from memory_core.services.read.working import WorkingMemory
from memory_core.settings import MemorySettings

MARKER = "zqxvbwkjhgfd"
WORDS = ("tea", "chess", "Lisbon", "divorce", "cello", "garden", "trains", "Kyoto")
_agents = itertools.count()


def _working(store: Any, clock: ManualClock, settings: MemorySettings) -> WorkingMemory:
    return WorkingMemory(
        store=store,
        calls=InlineCalls(),
        domain_clock=clock,
        infra_clock=clock,
        settings=settings,
        scheduler=None,
    )


def _rebuild(working: WorkingMemory, clock: ManualClock, agent: str) -> bool:
    deadline = Deadline.after(clock, 5.0)
    return asyncio.run(working.rebuild(agent, deadline=deadline, cancel=CancellationToken()))


def _temporal(clock: ManualClock, shape: int) -> TemporalMetadata | None:
    """Atemporal, or a state/plan whose interval ends or starts a few hours from now."""
    if shape == 0:
        return None
    hours = timedelta(hours=shape)
    if shape % 2:
        return TemporalMetadata(
            kind="state",  # type: ignore[arg-type]
            interval=Interval(valid_from=clock.now() - hours, valid_until=clock.now() + hours),
            precision="day",  # type: ignore[arg-type]
            timezone="UTC",
            confidence=0.9,
        )
    return TemporalMetadata(
        kind="plan",  # type: ignore[arg-type]
        interval=Interval(valid_from=clock.now() + hours),
        precision="day",  # type: ignore[arg-type]
        timezone="UTC",
        confidence=0.8,
    )


_OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("insert"),
            st.integers(0, len(WORDS) - 1),
            st.sampled_from(["semantic", "episodic", "reflection"]),
            st.integers(0, 5),
            st.booleans(),  # Session scope: never projected
        ),
        st.tuples(
            st.sampled_from(["archive", "restore", "delete", "edit", "supersede"]),
            st.integers(0, 20),
        ),
        st.tuples(st.just("advance"), st.integers(1, 7)),
        st.tuples(st.just("rebuild")),
        st.tuples(st.just("suppress"), st.integers(0, len(WORDS) - 1)),
    ),
    max_size=25,
)


@pytest.fixture(params=["sqlite", "fake"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    clock = ManualClock()
    if request.param == "sqlite":
        store: Any = ApswClaimStore(
            tmp_path_factory.mktemp("working") / "memory.sqlite3",
            secret_policy=PatternSecretPolicy(),
            clock=clock,
            synchronous="NORMAL",
        )
    else:
        store = InMemoryClaimStore(clock=clock)
    yield store, clock
    store.close()


def _apply(store: Any, clock: ManualClock, agent: str, op: tuple[Any, ...], ids: list[str]) -> None:
    name, *args = op
    now = clock.now()
    try:
        if name == "insert":
            word, kind, shape, narrow = args
            temporal = _temporal(clock, shape)
            draft = ClaimDraft(
                agent_id=agent,
                kind=ClaimKind(kind),
                content=f"The user mentioned {WORDS[word]} ({len(ids)}).",
                scope=Scope.session("s1") if narrow else Scope.agent(),
                importance=0.3 + 0.1 * shape,
                **({"temporal": temporal} if temporal else {}),
            )
            outcome = store.insert(draft, origin=WriteOrigin.USER_ADD, now=now)
            if outcome.claim is not None:
                ids.append(outcome.claim.id)
        elif name == "suppress":
            store.create_directive(
                agent,
                DirectiveKind.SUPPRESS_TOPIC,
                "Never mention it.",
                topic=WORDS[args[0]],
                now=now,
            )
        elif ids and name in {"archive", "restore", "delete", "edit", "supersede"}:
            claim = store.get(agent, ids[args[0] % len(ids)])
            if name == "archive":
                store.archive(agent, claim.id, now=now)
            elif name == "restore":
                store.restore(agent, claim.id, now=now)
            elif name == "delete":
                store.delete(agent, claim.id, now=now)
            elif name == "edit":
                store.update_content(
                    agent,
                    claim.id,
                    expected_revision=claim.revision,
                    content=claim.content + " Really.",
                    now=now,
                )
            else:
                draft = ClaimDraft(agent_id=agent, kind=claim.kind, content=f"Now: {claim.content}")
                outcome = store.supersede(
                    agent, claim.id, draft, expected_revision=claim.revision, now=now
                )
                if outcome.claim is not None:
                    ids.append(outcome.claim.id)
    except AgentMemoryError:
        pass  # a refused mutation (not found, not restorable, …) changes nothing


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=_OPS)
def test_a_stored_projection_is_never_stale_and_a_rebuild_equals_project_working(
    world: Any, ops: list[tuple[Any, ...]]
) -> None:
    """R-STORE-2: whenever the turn would show the stored row it equals a fresh build over
    the authoritative claims; after a rebuild — and after the row is dropped and rebuilt —
    the stored text is `project_working` over those claims."""
    store, clock = world
    agent = f"agent-{next(_agents)}"
    config = MemorySettings()
    working = _working(store, clock, config)
    ids: list[str] = []

    def fresh() -> Any:
        directives = store.list_directives(agent, status=DirectiveStatus.ACTIVE)
        return working.build(working.source(agent), directives, now=clock.now()), directives

    for op in ops:
        if op[0] == "advance":
            clock.advance(op[1] * 3600)
        elif op[0] == "rebuild":
            assert _rebuild(working, clock, agent)
        else:
            _apply(store, clock, agent, op, ids)
        # A turn after each step: it shows the stored row when current, else rebuilds it
        # and stores it compare-and-set (the service does that in the background).
        expected, directives = fresh()
        stored = store.working_projection(agent)
        shown = working.current(stored, directives, now=clock.now())
        if shown is None:
            working.put(agent, expected, stored.generation)
        else:
            assert (shown.text, shown.entries, shown.hidden) == (
                expected.text,
                expected.entries,
                expected.hidden,
            )

    assert _rebuild(working, clock, agent)
    expected, directives = fresh()
    row = store.working_projection(agent)
    stored = working.current(row, directives, now=clock.now())
    if stored is None:  # an agent that never had a projected claim gets no row
        assert row.generation == 0 and expected.text is None and not expected.hidden
        return
    # Kept, not re-stored, when still current: equal in all but its build instant.
    assert attrs.evolve(stored, built_at=expected.built_at) == expected
    topics = {d.topic for d in directives if d.kind is DirectiveKind.SUPPRESS_TOPIC}
    if not topics:
        claims = store.list_claims(agent, scope_filter=ScopeFilter.agent_only(), limit=200)
        plain = project_working(
            claims,
            now=clock.now(),
            budget_tokens=config.working_ceiling_tokens,
            policy=TemporalPolicy.from_settings(config),
        )
        assert stored.text == plain.text and stored.entries == plain.entries
    if isinstance(store, ApswClaimStore):  # drop the row: a projection, rebuilt the same
        with store._write(agent) as session:  # type: ignore[attr-defined]
            session.execute("DELETE FROM agent_memory_working WHERE agent_id = ?", (agent,))
        assert store.working_projection(agent).snapshot is None
        assert _rebuild(working, clock, agent)
        again = store.working_projection(agent).snapshot
        if expected.text is None and not expected.hidden:  # nothing to show: no row made
            assert again is None
        else:
            assert again is not None and again.text == expected.text == stored.text


def test_a_rebuild_that_loses_the_race_to_a_write_is_discarded(world: Any) -> None:
    """Compare-and-set: a write between the rebuild's read and its store wins; the stale
    build is not stored, and the next rebuild stores the new state."""
    store, clock = world
    agent = f"agent-{next(_agents)}"
    working = _working(store, clock, MemorySettings())
    store.insert(
        ClaimDraft(agent_id=agent, kind="semantic", content="The user likes tea."),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    )
    source = working.source

    def racing(agent_id: str) -> Any:
        claims = source(agent_id)
        store.insert(
            ClaimDraft(agent_id=agent, kind="semantic", content="The user plays chess."),
            origin=WriteOrigin.USER_ADD,
            now=clock.now(),
        )
        return claims

    working.source = racing  # type: ignore[method-assign]
    assert not _rebuild(working, clock, agent)
    assert store.working_projection(agent).snapshot is None
    working.source = source  # type: ignore[method-assign]
    assert _rebuild(working, clock, agent)
    snapshot = store.working_projection(agent).snapshot
    assert snapshot is not None and "chess" in (snapshot.text or "")


def _files_containing(directory: Path, needle: bytes) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if p.is_file() and needle in p.read_bytes())


def test_a_deleted_claims_text_leaves_the_working_row_with_the_delete(tmp_path: Path) -> None:
    """R-FORGET-1, R-PRIV-3: the stored projection shows the claim; its delete empties the
    row in the same transaction (no rebuild needed), so after the checkpoint no file holds
    the text. The control: before the delete the text is on disk."""
    clock = ManualClock()
    store = ApswClaimStore(
        tmp_path / "memory.sqlite3",
        secret_policy=PatternSecretPolicy(),
        clock=clock,
        synchronous="NORMAL",
    )
    working = _working(store, clock, MemorySettings())
    outcome = store.insert(
        ClaimDraft(agent_id="agent-a", kind="semantic", content=f"Her locker code is {MARKER}"),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    )
    assert outcome.claim is not None
    assert _rebuild(working, clock, "agent-a")
    snapshot = store.working_projection("agent-a").snapshot
    assert snapshot is not None and MARKER in (snapshot.text or "")
    store.checkpoint()
    assert _files_containing(tmp_path, MARKER.encode()) == ["memory.sqlite3"]
    store.delete("agent-a", outcome.claim.id, now=clock.now())
    assert store.working_projection("agent-a").snapshot is None
    store.checkpoint()
    assert _files_containing(tmp_path, MARKER.encode()) == []
    store.close()


def test_a_retired_agent_keeps_no_working_row_even_after_a_late_rebuild(tmp_path: Path) -> None:
    """Retirement removes the namespace: the row goes with it, and the rebuild the service
    schedules after the retirement's write finds nothing to show and creates none."""
    clock = ManualClock()
    store = ApswClaimStore(
        tmp_path / "memory.sqlite3", secret_policy=PatternSecretPolicy(), clock=clock
    )
    working = _working(store, clock, MemorySettings())
    store.insert(
        ClaimDraft(agent_id="agent-a", kind="semantic", content="The user likes tea."),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    )
    assert _rebuild(working, clock, "agent-a")
    store.retire_agent("agent-a")
    assert _rebuild(working, clock, "agent-a")
    with store._write() as session:  # type: ignore[attr-defined]
        rows = session.one("SELECT count(*) FROM agent_memory_working WHERE agent_id = 'agent-a'")
    assert rows is not None and rows[0] == 0
    store.close()
