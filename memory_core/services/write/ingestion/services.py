"""The ports and services every session's ingestion runtime shares (one set per
configuration); the composition root builds it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs

from memory_core.ports.blocking import BlockingCalls
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.cursor import CursorStore
from memory_core.ports.extraction import Extractor
from memory_core.ports.scheduler import TaskScheduler
from memory_core.ports.tape import IngestionProjection, TapeAnchorWriter, TapeRawEntryReader
from memory_core.services.write.decision.service import DecisionService
from memory_core.services.write.fences import WriteCoordinator
from memory_core.services.write.ingestion.types import CommitHook, IngestionPolicy, IngestionReport

__all__ = ["IngestionServices"]


@attrs.frozen(kw_only=True)
class IngestionServices:
    """The ports and services every session's runtime shares (one set per configuration)."""

    extractor: Extractor
    decisions: DecisionService
    tape: TapeRawEntryReader
    projection: IngestionProjection
    anchors: TapeAnchorWriter
    cursors: CursorStore
    coordinator: WriteCoordinator
    scheduler: TaskScheduler
    domain_clock: DomainClock
    infra_clock: InfraClock
    policy: IngestionPolicy  # IngestionPolicy.from_settings: no defaults of its own
    on_committed: CommitHook | None = None  # e.g. the embedding pipeline: marks, never waits
    # Awaited by `drain` once the chain has settled: until the work `on_committed` started
    # (the embeddings of the session's claims) has settled too.
    settle_committed: Callable[[str], Awaitable[None]] | None = None
    on_report: Callable[[IngestionReport], None] | None = None
    # Runs a `BlockingExtractor`'s computation off the event loop; None runs it on the loop.
    offload: BlockingCalls | None = None
