"""The ingestion benchmark's modes — bulk, turn by turn, a whole host turn by turn — each timed
by wall and process CPU from one instant, and the model alone on the texts a mode stored
(`benchmarks.ingestion`)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from memory_adapters.tapes import InMemoryTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import EmbeddingProvider, EmbeddingPurpose
from memory_core.services.memory import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_plugins.bootstrap import open_memory
from memory_plugins.loader import load_plugins

__all__ = [
    "Timed",
    "Timer",
    "baseline",
    "bulk",
    "calls",
    "contents",
    "host_turns",
    "open_service",
    "say",
    "turn_by_turn",
]

_SECONDS = 3_600.0  # deadlines of the benchmark's own calls: it measures, it never gives up


class _Clock:
    def monotonic(self) -> float:
        return time.monotonic()


_CLOCK = _Clock()


def calls() -> dict[str, Any]:
    return {"deadline": Deadline.after(_CLOCK, _SECONDS), "cancel": CancellationToken()}


@attrs.frozen(kw_only=True)
class Timed:
    """One run of a mode: wall and process CPU seconds (every thread's) from one instant,
    and for the host line the seconds inside `prepare_turn`."""

    seconds: float
    cpu: float
    in_turns: float | None = None


@attrs.define
class Timer:
    """Started when made; `stop` gives the wall and process CPU seconds since."""

    wall: float = attrs.field(factory=time.perf_counter)
    cpu: float = attrs.field(factory=time.process_time)

    def stop(self) -> Timed:
        return Timed(seconds=time.perf_counter() - self.wall, cpu=time.process_time() - self.cpu)


async def baseline(
    model: EmbeddingProvider, texts: Sequence[str], size: int
) -> tuple[float, float]:
    """Wall and CPU seconds the model takes for `texts` in requests of `size` (the gateway's)."""
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), size):
        batch = list(texts[start : start + size])
        await model.embed(batch, purpose=EmbeddingPurpose.BATCH, **calls())
    return time.perf_counter() - started, time.process_time() - cpu


async def _until_embedded(memory: MemoryService, agent: str) -> None:
    """Until no claim of `agent` waits for its embedding (polled: the drain is background
    work with a bounded delay, not something a host awaits). One indexed row per poll: a
    count of every pending claim would put the benchmark's own reads inside the clock."""
    while memory.store.list_pending_embeddings(agent, limit=1):
        await asyncio.sleep(0.01)


async def bulk(
    memory: MemoryService, tape: InMemoryTape, texts: Sequence[str], agent: str
) -> Timed:
    """The whole tape on the session before the clock starts; one settled turn ingests it."""
    for text in texts:
        tape.append_message(agent, "user", text)
        tape.append_message(agent, "assistant", "Noted.")
    session = memory.session(agent, agent)
    clock = Timer()
    session.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True))
    await session.drain()
    await _until_embedded(memory, agent)
    return clock.stop()


async def turn_by_turn(
    memory: MemoryService, tape: InMemoryTape, texts: Sequence[str], agent: str
) -> Timed:
    """Ingestion turn by turn: from the first settled turn to the last embedded claim."""
    session = memory.session(agent, agent)
    clock = Timer()
    for text in texts:
        tape.append_message(agent, "user", text)
        tape.append_message(agent, "assistant", "Noted.")
        session.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        await asyncio.sleep(0)  # a host's loop moves on to other work between turns
    await session.drain()
    await _until_embedded(memory, agent)
    return clock.stop()


async def host_turns(
    memory: MemoryService, tape: InMemoryTape, texts: Sequence[str], agent: str
) -> Timed:
    """A whole host turn by turn (recall included): to the last embedded claim, with the
    seconds spent inside `prepare_turn`."""
    session = memory.session(agent, agent)
    in_turns = 0.0
    clock = Timer()
    for text in texts:
        user = tape.append_message(agent, "user", text)
        turn_started = time.perf_counter()
        await session.prepare_turn(user.id, text)
        in_turns += time.perf_counter() - turn_started
        tape.append_message(agent, "assistant", "Noted.")
        session.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        await asyncio.sleep(0)
    await session.drain()
    await _until_embedded(memory, agent)
    return attrs.evolve(clock.stop(), in_turns=in_turns)


def contents(memory: MemoryService, agent: str) -> list[str]:
    return [claim.content for claim in memory.store.list_claims(agent, limit=1_000_000)]


def open_service(root: Path, tape: InMemoryTape, embedder: EmbeddingProvider) -> MemoryService:
    # The embedder is given as an override so the baseline can call the very same instance;
    # the service still wraps it in its guard, as it does the plugin's product.
    return open_memory(
        root,
        tape=tape,
        overrides={"embedding_provider": embedder},
        registry=load_plugins(strict=True, distributions={"agent-memory"}).registry,
    )


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
