"""Side effects after a commit must not undo or repeat it (R-WRITE-8, §7.1)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from ingestion_support import AGENT, Harness, make_harness

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import StoreError
from memory_core.ports.tape import Anchor
from memory_core.services.write.ingestion.service import IngestionOutcome, IngestionRuntime


class BrokenAnchors:
    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        raise StoreError("tape unavailable")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    built = make_harness(tmp_path)
    yield built
    built.close()


def _runtime(harness: Harness, **changes: object) -> IngestionRuntime:
    services = attrs.evolve(harness.services, **changes)  # type: ignore[arg-type]
    return IngestionRuntime(services, agent_id=AGENT, session_id="s1")


def test_lost_anchor_does_not_undo_the_commit_or_hold_the_cursor(harness: Harness) -> None:
    """§7.1: the anchor records settled work; failing to write it is logged, not retried."""

    async def scenario() -> None:
        runtime = _runtime(harness, anchors=BrokenAnchors())
        report = await harness.turn(runtime, "I live in Paris.")
        assert report.outcome is IngestionOutcome.COMPLETED
        assert [chunk.anchor_id for chunk in report.chunks] == [None]
        assert harness.cursors.get(AGENT, "s1") == 2 and harness.live("The user lives in Paris.")

    asyncio.run(scenario())


def test_failing_commit_hook_leaves_the_commit_and_cursor_in_place(harness: Harness) -> None:
    """R-WRITE-8: the hook (embedding pipeline) settles — even by failing — before the
    cursor moves; its failure leaves embeddings pending, never the claims uncommitted."""
    calls: list[tuple[str, ...]] = []

    async def failing_hook(agent_id: str, ids: tuple[str, ...]) -> None:
        calls.append(ids)
        raise RuntimeError("vector store down")

    async def scenario() -> None:
        runtime = _runtime(harness, on_committed=failing_hook)
        report = await harness.turn(runtime, "I live in Paris.")
        assert report.outcome is IngestionOutcome.COMPLETED
        assert calls == [report.stored_ids]
        assert harness.cursors.get(AGENT, "s1") == 2

    asyncio.run(scenario())


def test_async_commit_hook_settles_before_the_cursor_advances(harness: Harness) -> None:
    """R-WRITE-8: "advance the cursor only after owned work settles"."""
    seen: list[int] = []

    async def hook(agent_id: str, ids: tuple[str, ...]) -> None:
        await asyncio.sleep(0)
        seen.append(harness.cursors.get(AGENT, "s1"))

    async def scenario() -> None:
        runtime = _runtime(harness, on_committed=hook)
        await harness.turn(runtime, "I live in Paris.")
        assert seen == [0] and harness.cursors.get(AGENT, "s1") == 2

    asyncio.run(scenario())


def test_a_chain_of_many_chunks_announces_its_writes_once(tmp_path: Path) -> None:
    """R-READ-9, R-WRITE-1: every chunk of a long tape commits on its own, but the release
    listeners (the working projection's rebuild) hear the chain once, when it ends, not
    once per chunk; a write outside the chain is announced at once."""
    harness = make_harness(tmp_path, extraction_chunk_tokens=64, ingestion_max_chunks_per_pass=2)
    announced: list[str] = []
    harness.coordinator.on_released(announced.append)
    runtime = harness.runtime()

    async def go() -> None:
        for n in range(12):
            harness.say("s1", f"My sister Ana {n} lives in Porto and plays the violin.")
        await harness.settle(runtime, had_tool_use=True)
        await runtime.drain()
        assert len(harness.committed) > 2  # several chunks, over several passes
        assert announced == [AGENT]
        async with harness.coordinator.exclusive(AGENT):
            pass
        assert announced == [AGENT, AGENT]

    try:
        asyncio.run(go())
    finally:
        harness.close()
