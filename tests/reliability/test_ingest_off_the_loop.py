"""Extraction that computes runs off the event loop (issue 15; R-READ-1, R-WRITE-1): while
agent A's long tape is being extracted, agent B's turn still meets its deadline."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from memory_adapters.extractors import RulesExtractor
from memory_adapters.tapes.memory import InMemoryTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.extraction import BlockingExtractor, ExtractionRequest, ExtractionResult
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_core.settings import MemorySettings
from memory_plugins.api import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice

A, B = "agent-a", "agent-b"
DEADLINE_MS = 500
MARGIN_S = 1.0  # the turn's documented margin past its soft deadline (host guide)
EXTRACTION_S = 3.0  # one chunk's computation: far past B's deadline plus the margin


class ComputingExtractor:
    """The rules extractor behind a chunk that takes EXTRACTION_S of computation (slept, so
    the test does not load the machine); it records the threads it ran on."""

    name = "computing"

    def __init__(self) -> None:
        self.inner = RulesExtractor()
        self.started = threading.Event()
        self.threads: set[int] = set()

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        return self.extract_blocking(request, deadline=deadline, cancel=cancel)

    def extract_blocking(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        self.threads.add(threading.get_ident())
        self.started.set()
        time.sleep(EXTRACTION_S)
        return self.inner.extract_blocking(request, deadline=deadline, cancel=cancel)


def test_a_turn_of_one_agent_meets_its_deadline_while_another_extracts_a_long_tape(
    tmp_path: Path,
) -> None:
    """R-READ-1: B's `prepare_turn` returns within its deadline plus the margin while A's
    chunk is being extracted — on a worker thread, not the loop's — and A's claims land."""
    extractor = ComputingExtractor()
    assert isinstance(extractor, BlockingExtractor)
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    config = MemoryConfig(
        settings=MemorySettings(prepare_turn_deadline_ms=DEADLINE_MS), plugins=plugins
    )

    async def go() -> None:
        tape = InMemoryTape()
        memory = open_memory(
            tmp_path / "data", config=config, tape=tape, overrides={"extractor": extractor}
        )
        for n in range(40):
            tape.append_message("tape-a", "user", f"I really enjoy pottery class number {n}.")
            tape.append_message("tape-a", "assistant", "Noted.")
        ingesting = memory.session(A, "tape-a")
        ingesting.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True))
        while not extractor.started.is_set():
            await asyncio.sleep(0.01)

        user = tape.append_message("tape-b", "user", "What do I enjoy on weekends?")
        started = time.monotonic()
        await memory.session(B, "tape-b").prepare_turn(user.id, user.content)
        elapsed = time.monotonic() - started
        assert elapsed < DEADLINE_MS / 1000 + MARGIN_S, elapsed
        assert threading.get_ident() not in extractor.threads

        await ingesting.drain()
        stored = memory.store.list_claims(A, limit=100)
        assert len(stored) == 40
        assert memory.pending_embeddings(A) == 0  # the drain settled the embeddings too
        await memory.aclose()

    asyncio.run(go())
