"""Where a pass reads its range from, and when it may commit the cursor (R-WRITE-8)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from ingestion_support import AGENT, Harness, make_harness

from memory_adapters.tapes.memory import InMemoryTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import StoreError
from memory_core.ports.tape import ProjectionRange
from memory_core.services.write.ingestion.service import IngestionOutcome


class BrokenProjectionTape(InMemoryTape):
    """An in-memory tape whose projection can be made to fail, reads or rebuilds."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_reads = False
        self.fail_rebuilds = False
        self.reads = 0

    async def read_current_range(
        self,
        session_id: str,
        after_order_seq: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> ProjectionRange:
        self.reads += 1
        if self.fail_reads:
            raise StoreError("projection table unavailable")
        return await super().read_current_range(
            session_id, after_order_seq, deadline=deadline, cancel=cancel
        )

    async def rebuild_projection(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        if self.fail_rebuilds:
            raise StoreError("projection rebuild failed")
        await super().rebuild_projection(session_id, deadline=deadline, cancel=cancel)


@pytest.fixture
def tape() -> BrokenProjectionTape:
    return BrokenProjectionTape()


@pytest.fixture
def harness(tmp_path: Path, tape: BrokenProjectionTape) -> Iterator[Harness]:
    built = make_harness(tmp_path, tape=tape, projection_cooldown_seconds=30)
    yield built
    built.close()


def _stale_turn(harness: Harness, user: str) -> None:
    """A host write that does not maintain the projection: heads now disagree."""
    harness.clock.advance(60)
    harness.tape.append_message("s1", "user", user, project=False)
    harness.tape.append_message("s1", "assistant", "x" * 200, project=False)


def test_stale_projection_is_rebuilt_and_the_cursor_commits(harness: Harness) -> None:
    """R-WRITE-8: heads disagree → rebuild from the effective tape; the rebuild succeeded,
    so the cursor may advance."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        _stale_turn(harness, "I live in Paris.")
        report = await harness.settle(runtime)
        assert report.outcome is IngestionOutcome.COMPLETED and report.commit_allowed
        assert harness.cursors.get(AGENT, "s1") == 2
        assert harness.live("The user lives in Paris.")

    asyncio.run(scenario())


def test_failed_rebuild_stores_from_the_tape_but_never_advances_the_cursor(
    harness: Harness, tape: BrokenProjectionTape
) -> None:
    """R-WRITE-8: rebuild fails → tape fallback; the work is done, the cursor is not moved
    over an incomplete projection, and the pass says so (UNCOMMITTED)."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        tape.fail_rebuilds = True
        _stale_turn(harness, "I live in Paris.")
        report = await harness.settle(runtime)
        assert report.outcome is IngestionOutcome.UNCOMMITTED and not report.commit_allowed
        assert harness.cursors.get(AGENT, "s1") == 0
        assert harness.live("The user lives in Paris.")
        assert [chunk.cursor_advanced for chunk in report.chunks] == [False]

    asyncio.run(scenario())


def test_projection_failure_falls_back_to_the_tape_and_cools_down(
    harness: Harness, tape: BrokenProjectionTape
) -> None:
    """R-WRITE-8: a failing projection read → tape fallback without cursor commits; the
    projection is left alone for the cooldown, then tried again and commits resume.
    Replayed claims come back as duplicates, never as second rows."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        tape.fail_reads = True
        first = await harness.turn(runtime, "I live in Paris.")
        assert first.outcome is IngestionOutcome.UNCOMMITTED
        assert tape.reads == 1 and harness.cursors.get(AGENT, "s1") == 0

        second = await harness.turn(runtime, "I work at Acme.", advance_seconds=10)
        assert second.outcome is IngestionOutcome.UNCOMMITTED
        assert tape.reads == 1  # cooling down: the projection was not asked
        assert second.chunks[0].report.duplicate_ids  # Paris again: a duplicate

        tape.fail_reads = False
        third = await harness.turn(runtime, "I prefer tea over coffee.", advance_seconds=30)
        assert third.outcome is IngestionOutcome.COMPLETED and tape.reads == 2
        assert harness.cursors.get(AGENT, "s1") == 6
        contents = sorted(claim.content for claim in harness.claims())
        assert contents == [
            "The user lives in Paris.",
            "The user prefers tea over coffee.",
            "The user works at Acme.",
        ]

    asyncio.run(scenario())


def test_long_ranges_continue_on_the_same_chain_in_budgeted_passes(tmp_path: Path) -> None:
    """§7.1: at most `max_chunks_per_pass` chunks per pass (PARTIAL), the rest follows on
    the same chain without a second admission, and the cursor ends at the tail."""

    async def scenario(harness: Harness) -> None:
        runtime = harness.runtime("s1")
        for city in ("Paris", "Rome", "Oslo", "Berlin", "Vienna"):
            harness.say("s1", f"I work at {city} Labs.", "y" * 160)
        await harness.settle(runtime, had_tool_use=True)
        assert [report.outcome for report in harness.reports] == [
            IngestionOutcome.PARTIAL,
            IngestionOutcome.PARTIAL,
            IngestionOutcome.COMPLETED,
        ]
        cursors = [report.cursor_after for report in harness.reports]
        assert cursors == sorted(set(cursors)) and cursors[-1] == 10
        assert [len(report.chunks) for report in harness.reports] == [2, 2, 1]
        assert harness.cursors.get(AGENT, "s1") == 10
        assert harness.live("The user works at Vienna Labs.")

    harness = make_harness(
        tmp_path,
        ingestion_max_chunks_per_pass=2,
        extraction_chunk_tokens=64,
        extraction_chunk_code_points=256,
    )
    try:
        asyncio.run(scenario(harness))
    finally:
        harness.close()
