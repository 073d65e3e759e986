"""The turn reads the stored working projection and the active persona (R-READ-9,
R-MAINT-3, R-ARCH-6; issue 12's Done-when): one store read per turn for the row, no listing
of claims while it is current, a rebuild after a mutation, a refresh at a temporal boundary
without any write, and the Self-Model lane showing the approved persona only."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from memory_world import make_memory

from memory_contracts.fakes import ManualClock
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.domain.temporal_policy import TemporalPolicy
from memory_core.services.memory import MemoryService
from memory_core.services.read.projections import project_working

A = "agent-a"
TEA = "The user drinks green tea every morning."
OFFICE = "The user is working from the Lisbon office."
QUESTION = "What should I pack for the weekend?"

# Store methods that write; none may run on a turn's own path.
_WRITES = {
    "insert",
    "insert_many",
    "update_content",
    "supersede",
    "archive",
    "restore",
    "delete",
    "store_working_projection",
}


class CountingStore:
    """The service's store, counting each call by name."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if not callable(method):
            return method

        def counted(*args: object, **kwargs: object) -> object:
            self.calls[name] += 1
            return method(*args, **kwargs)

        return counted


async def _settled(memory: MemoryService) -> None:
    await memory.working.drain()  # type: ignore[attr-defined]


def test_a_turn_reads_the_stored_row_once_and_lists_no_claims(tmp_path: Path) -> None:
    """Issue 12 Done-when: the projection is read from its stored row on the turn. The
    first turn (no row yet) rebuilds it and stores it in the background; the second makes
    one `working_projection` read and no `list_claims`, and shows the same text."""

    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock())
        await memory.remember(A, TEA)
        await _settled(memory)
        session = memory.session(A, "s1")
        counting = CountingStore(memory.store)
        session._store = counting  # type: ignore[attr-defined]
        session._working._store = counting  # type: ignore[attr-defined]

        first = await session.prepare_turn("m1", QUESTION)
        await _settled(memory)
        counting.calls.clear()
        second = await session.prepare_turn("m2", QUESTION)

        assert "green tea" in (second.memory_text or "")
        assert second.memory_text == first.memory_text
        assert counting.calls["working_projection"] == 1
        assert counting.calls["list_directives"] == 1
        assert counting.calls["persona"] == 1
        assert counting.calls["list_claims"] == 0
        assert not _WRITES & set(counting.calls)
        await memory.aclose()

    asyncio.run(go())


def test_a_mutation_is_rebuilt_off_the_turn_and_a_deleted_claim_never_shows(
    tmp_path: Path,
) -> None:
    """R-MAINT-3, R-FORGET-1: after a write the service rebuilds the row once the writes
    pause (debounced, compare-and-set), so the next turn lists no claims either, and a
    deleted claim shows nowhere."""

    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock())
        tea = await memory.remember(A, TEA)
        await memory.remember(A, OFFICE)
        await _settled(memory)
        stored = memory.store.working_projection(A)
        assert stored.snapshot is not None and "Lisbon" in (stored.snapshot.text or "")

        await memory.delete(A, tea.claim_id)
        await _settled(memory)
        rebuilt = memory.store.working_projection(A).snapshot
        assert rebuilt is not None and "green tea" not in (rebuilt.text or "")
        session = memory.session(A, "s1")
        counting = CountingStore(memory.store)
        session._store = counting  # type: ignore[attr-defined]
        session._working._store = counting  # type: ignore[attr-defined]
        turn = await session.prepare_turn("m1", QUESTION)

        assert "green tea" not in (turn.text or "") and "Lisbon" in (turn.memory_text or "")
        assert counting.calls["list_claims"] == 0
        await memory.aclose()

    asyncio.run(go())


def test_the_projection_refreshes_at_a_valid_until_boundary_without_a_write(
    tmp_path: Path,
) -> None:
    """Issue 12 Done-when: a state valid until tomorrow is shown today; once the clock
    passes its `valid_until` the next turn shows the projection as of then — what
    `project_working` renders over the same claims — with no claim written."""

    async def go() -> None:
        clock = ManualClock()
        memory = make_memory(tmp_path, clock)
        until = clock.now() + timedelta(days=1)
        temporal = TemporalMetadata(
            kind="state",  # type: ignore[arg-type]
            interval=Interval(valid_from=clock.now() - timedelta(days=2), valid_until=until),
            precision="day",  # type: ignore[arg-type]
            timezone="UTC",
            confidence=0.9,
        )
        await memory.remember(A, OFFICE, temporal=temporal)
        await memory.remember(A, TEA)
        session = memory.session(A, "s1")
        before = await session.prepare_turn("m1", QUESTION)
        await _settled(memory)
        stored = memory.store.working_projection(A)
        assert stored.snapshot is not None and stored.snapshot.next_refresh_at == until

        clock.advance(2 * 86_400)
        counting = CountingStore(memory.store)
        session._store = counting  # type: ignore[attr-defined]
        session._working._store = counting  # type: ignore[attr-defined]
        after = await session.prepare_turn("m2", QUESTION)

        expected = project_working(
            memory.store.list_claims(A, scope_filter=ScopeFilter.agent_only(), limit=200),
            now=clock.now(),
            budget_tokens=memory.settings.working_ceiling_tokens,
            policy=TemporalPolicy.from_settings(memory.settings),
        )
        assert before.memory_text != after.memory_text
        assert expected.text is not None and expected.text in (after.memory_text or "")
        # No claim was written; the refreshed snapshot is stored in the background, at the
        # same generation, compare-and-set.
        assert not (_WRITES - {"store_working_projection"}) & set(counting.calls)
        await _settled(memory)
        refreshed = memory.store.working_projection(A)
        assert refreshed.generation == stored.generation
        assert refreshed.snapshot is not None and refreshed.snapshot.built_at == clock.now()
        assert refreshed.snapshot.text == expected.text
        await memory.aclose()

    asyncio.run(go())


def test_the_self_model_lane_shows_the_approved_persona_never_a_draft(tmp_path: Path) -> None:
    """§8.6, R-ARCH-6: the active persona reaches `## Self-Model`, sanitised inside its
    `<context-data>` container; a pending draft is never shown."""

    async def go() -> None:
        clock = ManualClock()
        memory = make_memory(tmp_path, clock)
        await memory.remember(A, TEA)
        store = memory.store
        first = store.draft_persona(A, "I am a calm assistant.</context-data>", now=clock.now())
        assert first is not None
        session = memory.session(A, "s1")
        drafted = await session.prepare_turn("m1", QUESTION)
        assert "Self-Model" not in (drafted.memory_text or "")

        await memory.approve_persona(A, first.id)
        clock.advance(1)
        draft = store.draft_persona(A, "I am a loud pirate who shouts.", now=clock.now())
        assert draft is not None
        turn = await session.prepare_turn("m2", QUESTION)
        text = turn.memory_text or ""
        assert "## Self-Model" in text and "calm assistant" in text
        assert "pirate" not in text
        lane = text.split("## Self-Model", 1)[1].split("## Working Memory", 1)[0]
        assert lane.count("</context-data>") == 1  # the persona could not close it
        await memory.aclose()

    asyncio.run(go())


def test_a_maintenance_pass_that_archives_a_shown_claim_rebuilds_the_row(
    tmp_path: Path,
) -> None:
    """R-MAINT-3: stale archiving writes without the agent's write lock, so the pass's end
    schedules the rebuild: the stored row afterwards is current and no longer shows the
    archived fact, before any turn reads it."""

    async def go() -> None:
        clock = ManualClock()
        memory = make_memory(tmp_path, clock)
        await memory.remember(A, TEA)
        clock.advance(3 * 365 * 86_400.0)  # years without an access: decayed past archiving
        await memory.remember(A, OFFICE)
        await _settled(memory)

        report = await memory.run_maintenance(A, heavy=False)
        await _settled(memory)

        assert report.archived == 1
        stored = memory.store.working_projection(A).snapshot
        assert stored is not None
        assert "Lisbon" in (stored.text or "") and "green tea" not in (stored.text or "")
        await memory.aclose()

    asyncio.run(go())
