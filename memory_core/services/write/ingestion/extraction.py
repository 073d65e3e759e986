"""One chunk's extraction call: the request in the domain clock's frame, and where it runs.

A model extractor waits on a network and yields the loop while it does. The rules extractor
computes — tens of milliseconds for a chunk of a long tape — and run on the loop it would hold
every other agent's turn for that long, while the local embedder's threads want the same
cores. An extractor that offers `extract_blocking` (`BlockingExtractor`) therefore runs
through the `BlockingCalls` port the composition root hands in (a worker thread), under the
chunk's deadline and token: the loop keeps answering turns (R-READ-1, R-WRITE-1, issue 15).
"""

from __future__ import annotations

from datetime import datetime

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.blocking import BlockingCalls
from memory_core.ports.clock import DomainClock
from memory_core.ports.extraction import (
    BlockingExtractor,
    ExtractionRequest,
    ExtractionResult,
    Extractor,
)
from memory_core.ports.tape import TapeEntry
from memory_core.services.write.chunking import Chunk

__all__ = ["chunk_request", "extract"]


def chunk_request(
    chunk: Chunk, *, agent_id: str, session_id: str, clock: DomainClock
) -> tuple[ExtractionRequest, datetime | None]:
    """The extraction request of `chunk`, and when the chunk was said (None: said now).

    Unknown when said means said now: dates resolve against the clock, and the write
    decision orders by message order alone (never by a clock read before extraction, which
    would make holders written later in this same pass look newer)."""
    entries = tuple(
        TapeEntry(
            id=part.entry_id,
            session_id=session_id,
            order_seq=part.order_seq,
            role=part.role,
            content=part.text,
            created_at=part.created_at,
        )
        for part in chunk.parts
    )
    said_at = said_at_of(chunk, clock.now())
    request = ExtractionRequest(
        agent_id=agent_id,
        session_id=session_id,
        entries=entries,
        reference_time=said_at or clock.now(),
        timezone=clock.timezone(),
    )
    return request, said_at


async def extract(
    extractor: Extractor,
    request: ExtractionRequest,
    *,
    offload: BlockingCalls | None,
    deadline: Deadline,
    cancel: CancellationToken,
) -> ExtractionResult:
    """The extractor's result for `request`: off the loop through `offload` when the
    extractor is pure computation, else awaited on the loop (it yields while it waits)."""
    if offload is not None and isinstance(extractor, BlockingExtractor):
        return await offload.run(
            lambda: extractor.extract_blocking(request, deadline=deadline, cancel=cancel),
            deadline=deadline,
            cancel=cancel,
        )
    return await extractor.extract(request, deadline=deadline, cancel=cancel)


def said_at_of(chunk: Chunk, now: datetime) -> datetime | None:
    """When the chunk was said: the `created_at` of its last message that has one, never
    later than `now` (a host clock ahead of ours does not date the future); None when no
    message says (then it was said now)."""
    for part in reversed(chunk.parts):
        if part.created_at is not None:
            return min(part.created_at, now)
    return None
