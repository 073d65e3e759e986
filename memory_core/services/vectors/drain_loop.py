"""The coalesced embedding drain: one loop per service embeds what commits marked, in batches
across turns and agents (issue 15; R-WRITE-1, R-WRITE-6, R-VEC-4).

A turn's commit holds one to three claims. Embedding them then and there paid one model
call, one vector-store transaction and one claim-store transaction per claim for a handful
of texts, and made the ingestion chain wait for all of it. Here a commit only *marks* its
agent (`mark`, synchronous, never waits); the loop waits at most `delay_seconds` for more
marks — or not at all once `batch_size` claims are marked — and then drains batch after
batch through `VectorIndex.drain_agents`: one model call, one vector-store write per agent
and one `mark_embeddings` transaction per batch.

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
from memory_core.services.vectors.index import VectorIndex
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
        tunables = self._tunables
        while self._marked and not self._closed:
            await self._gather()
            if self._closed:
                return
            agents, self._marked = list(self._marked), {}
            try:
                report, more = await self._index.drain_agents(
                    agents,
                    limit=tunables.batch_size,
                    deadline=Deadline.after(self._clock, tunables.pass_seconds),
                    cancel=self._cancel,
                )
            except Exception as exc:
                # The loop outlives any one batch: its rows stay pending for the next drain.
                log.warning("embedding drain batch failed: %s", type(exc).__name__)
                continue
            if report.failed:
                continue  # the provider or a store failed: retried on the next mark
            for agent_id in more:
                # A full batch: the agent may have more; take it again without waiting.
                self._marked[agent_id] = self._marked.get(agent_id, 0) + tunables.batch_size
            if report.embedded:
                await self._certify(agents)

    async def _gather(self) -> None:
        """Wait for the batch to fill, at most `delay_seconds` (counted in polls, so a test
        clock that never moves cannot hold the loop)."""
        polls = round(self._tunables.delay_seconds / _POLL_SECONDS)
        for _ in range(polls):
            if self._settling or self._closed or self.marked >= self._tunables.batch_size:
                return
            await self._scheduler.sleep(_POLL_SECONDS)

    async def _certify(self, agents: Sequence[str]) -> None:
        """An agent's first embeddings earn its ready certificate now, so its next turn is
        hybrid (a new agent's own warm-up found nothing to certify)."""
        for agent_id in agents:
            if self._index.certificate(agent_id) is None and not self._closed:
                await self._index.warm(
                    agent_id,
                    deadline=Deadline.after(self._clock, self._tunables.pass_seconds),
                    cancel=self._cancel,
                    if_cold=True,
                )
