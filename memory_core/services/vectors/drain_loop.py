"""The coalesced embedding drain: one loop per service embeds what commits marked, in batches
across turns and agents (issue 15; R-WRITE-1, R-WRITE-6, R-VEC-4).

A turn's commit holds one to three claims. Embedding them then and there paid one model
call, one vector-store transaction and one claim-store transaction per claim for a handful
of texts, and made the ingestion chain wait for all of it. Here a commit only *marks* its
agent (`mark`, synchronous, never waits); the loop waits at most `delay_seconds` for more
marks — or not at all once `batch_size` claims are marked — and then drains batch after
batch through `VectorIndex.pipeline()`: one model call, one vector-store write per agent
and one `mark_embeddings` transaction per batch, each batch recorded while the next one's
model call runs (`pipeline`), so the model is not idle between batches.

The marks are hints, not the queue: the claim store's pending rows are. Whatever the loop
never reaches — it was closed, a batch failed, the process died — stays pending and is
embedded by the next drain of that agent (its next commit, or the warm-up its first cold
turn requests after a reopen). A claim committed while the loop keeps up is in the vector
lane within `delay_seconds` plus the batches queued ahead of it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.clock import InfraClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.services.vectors.drain_batch import DrainReport, Flight
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.vectors.pipeline import DrainPipeline
from memory_core.settings import MemorySettings

__all__ = ["DrainLoop", "DrainTunables"]

log = logging.getLogger(__name__)

# The loop looks at the marked count this often while it waits for a batch to fill.
_POLL_SECONDS = 0.01


@attrs.frozen(kw_only=True)
class DrainTunables:
    """What the loop reads from `MemorySettings` (no defaults of its own)."""

    batch_size: int
    delay_seconds: float
    # The deadline of one batch (its model call, vector and state writes), and of certifying
    # an agent after its first embeddings.
    pass_seconds: float

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> DrainTunables:
        return cls(
            batch_size=settings.embedding_drain_batch_size,
            delay_seconds=settings.embedding_drain_delay_ms / 1000,
            pass_seconds=settings.embedding_pass_seconds,
        )


class DrainLoop:
    """Marks in, batches out; at most one loop task at a time."""

    def __init__(
        self,
        *,
        index: VectorIndex,
        scheduler: TaskScheduler,
        infra_clock: InfraClock,
        tunables: DrainTunables,
    ) -> None:
        self._index = index
        self._scheduler = scheduler
        self._clock = infra_clock
        self._tunables = tunables
        self._marked: dict[str, int] = {}  # agent -> claims marked, in first-marked order
        self._task: TaskHandle | None = None
        self._settling = 0  # callers waiting in `settle`: do not wait for batches to fill
        self._closed = False
        self._cancel = CancellationToken()
        self._more: dict[Flight, list[str]] = {}  # a full batch's agents that may have more
        self._stalled = False  # the last batch failed: no full batch is taken again

    @property
    def marked(self) -> int:
        """Claims marked and not yet taken into a batch (a hint: the store knows the truth)."""
        return sum(self._marked.values())

    def mark(self, agent_id: str, claims: int) -> None:
        """Committed claims of `agent_id` wait for their embedding; returns at once. After
        `close`, nothing is scheduled: the rows stay pending for the next drain."""
        if self._closed or claims <= 0:
            return  # with no embedder the batch marks the claims `fts_only`: still drained
        self._marked[agent_id] = self._marked.get(agent_id, 0) + claims
        if self._task is None or self._task.done:
            self._task = self._scheduler.spawn(self._run, name="memory-embed-drain")

    async def settle(self) -> None:
        """Until every mark made so far is drained (or its batch failed), without waiting
        for batches to fill: a session's drain, and the service's close, wait here."""
        self._settling += 1
        try:
            while self._task is not None and not self._task.done:
                await self._task.wait()
        finally:
            self._settling -= 1

    def close(self) -> None:
        """Take no more marks and cancel the batch in flight: its claims stay pending, and
        so do those still marked (nothing is lost, only deferred to the next open)."""
        self._closed = True
        self._marked.clear()
        self._cancel.cancel("embedding drain closed")

    async def _run(self) -> None:
        pipeline = self._index.pipeline()
        flight: Flight | None = None
        try:
            while not self._closed:
                if flight is None:
                    if not self._marked:
                        return
                    await self._gather()
                    if self._closed:
                        return
                    flight = await self._launch(pipeline)
                    continue
                await flight.called()
                # The next batch's model call runs while this one's vectors and states are
                # written, so the model is not idle between batches. What was marked during
                # the call is the next batch (the call was its gather); someone waiting for
                # one of this batch's agents gets the lock first.
                following = None
                if self._marked and not self._closed and not pipeline.wanted(flight):
                    following = await self._launch(pipeline)
                current, flight = flight, following
                await self._land(pipeline, current)
        finally:
            if flight is not None:
                pipeline.abandon(flight)  # the loop was cancelled with a batch in the air
            self._more.clear()

    async def _launch(self, pipeline: DrainPipeline) -> Flight | None:
        """The next batch in the air: what was marked, up to `batch_size` claims."""
        agents, self._marked = list(self._marked), {}
        try:
            flight, more = await pipeline.launch(
                agents,
                limit=self._tunables.batch_size,
                deadline=Deadline.after(self._clock, self._tunables.pass_seconds),
                cancel=self._cancel,
            )
        except Exception as exc:
            # The loop outlives any one batch: its rows stay pending for the next drain.
            log.warning("embedding drain batch failed: %s", type(exc).__name__)
            return None
        if flight is not None and more:
            if self._stalled:
                self._more[flight] = more  # taken again once this batch lands
            else:
                # A full batch: its agents may have more. Marked now, so the next launch
                # (beside this batch's record) takes them without waiting.
                self._remark(more)
        return flight

    async def _land(self, pipeline: DrainPipeline, flight: Flight) -> None:
        try:
            report = await pipeline.land(
                flight, certify=Deadline.after(self._clock, self._tunables.pass_seconds)
            )
        except Exception as exc:
            log.warning("embedding drain batch failed: %s", type(exc).__name__)
            report = DrainReport(failed=True)
        # A failed batch (the provider or a store) stalls the run: its claims and what a
        # full batch left behind wait for the next mark, so an outage is not retried hot.
        self._stalled = report.failed
        more = self._more.pop(flight, [])
        if not report.failed:
            self._remark(more)

    def _remark(self, agents: Sequence[str]) -> None:
        for agent_id in agents:
            if agent_id not in self._marked:
                self._marked[agent_id] = self._tunables.batch_size

    async def _gather(self) -> None:
        """Wait for the batch to fill, at most `delay_seconds` (counted in polls, so a test
        clock that never moves cannot hold the loop)."""
        polls = round(self._tunables.delay_seconds / _POLL_SECONDS)
        for _ in range(polls):
            if self._settling or self._closed or self.marked >= self._tunables.batch_size:
                return
            await self._scheduler.sleep(_POLL_SECONDS)
