"""Embedding batches back to back: one batch's vectors and states are written while the next
batch's model call runs (issue 15; R-WRITE-6, R-VEC-4, R-FORGET-1).

Recorded one after the other, a batch left the model idle while its vectors went to the
vector store (a new namespace's first write costs a quarter of a second), its states were
marked and the next batch was listed. `DrainPipeline` lets `DrainLoop` keep two batches in
the air: it launches the next batch (its cleanup rows queued first, then its model call in
the background) as soon as the current one's model call has returned, and only then records
the current one. Each batch keeps every rule of `drain_batch`: its cleanup rows are written
before its model call, its marks are one revision-CAS transaction, and a claim forgotten
while its call is out loses the CAS and has its vector deleted again.

The vector index's per-agent locks cover a batch from before its listing to after its
record, so a warm-up never sees a batch half written and a sweep never takes a batch's rows
while its vectors are not yet written. Two batches of one agent in the air share the lock:
the pipeline counts its holds and frees the lock when the last batch of the agent lands; a
sweep runs only for agents with no batch in the air. Someone waiting for one of the current
batch's agents (a warm-up, a reindex) stops the pipelining for a step, so the lock is freed
between batches as before. Only the pipeline holds several of these locks at once and takes
them in sorted order within one launch; every other holder takes one lock at a time, so no
two holders can wait on each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Protocol

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.services.vectors.drain_batch import DrainReport, EmbeddingDrain, Flight
from memory_core.services.write.fences import AgentLocks

__all__ = ["Certify", "DrainPipeline"]


class Certify(Protocol):
    """Warms a still-uncertified agent whose lock the caller holds (`VectorIndex`'s);
    `identity` is the one the batch was just embedded with."""

    def __call__(
        self,
        agent_id: str,
        *,
        identity: EmbeddingIdentity,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Awaitable[None]: ...


class DrainPipeline:
    """The batches of one drain loop's run, and the agent locks they hold."""

    def __init__(self, *, drain: EmbeddingDrain, locks: AgentLocks | None, certify: Certify):
        self._drain = drain
        self._locks = locks
        self._certify = certify
        self._holds: dict[str, int] = {}  # agent -> launches holding its lock
        self._air: list[Flight] = []  # launched, not yet landed

    @property
    def in_air(self) -> int:
        return len(self._air)

    async def launch(
        self,
        agent_ids: Sequence[str],
        *,
        limit: int,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> tuple[Flight | None, list[str]]:
        """Take up to `limit` pending claims of `agent_ids` (none of a batch in the air) and
        start their model call in the background. Returns the flight (None: nothing was
        pending) and the agents that may have more (`EmbeddingDrain.take`)."""
        agents = list(dict.fromkeys(agent_ids))
        await self._hold(agents)
        try:
            flying = {agent for flight in self._air for agent in flight.batch}
            quiet = [agent for agent in agents if agent not in flying]
            await self._drain.sweep(quiet, deadline=deadline, cancel=cancel)
            busy = {claim_id for flight in self._air for claim_id in flight.claim_ids}
            batch, more = self._drain.take(agents, limit=limit, busy=busy)
        except BaseException:
            self._let_go(agents)
            raise
        self._let_go([agent for agent in agents if agent not in batch])
        if not batch:
            return None, more
        flight = self._drain.launch(batch, deadline=deadline, cancel=cancel, background=True)
        self._air.append(flight)
        return flight, more

    def wanted(self, flight: Flight) -> bool:
        """Someone waits for one of `flight`'s agents: land it before launching another."""
        return self._locks is not None and any(self._locks.wanted(a) for a in flight.batch)

    async def land(self, flight: Flight, *, certify: Deadline | None = None) -> DrainReport:
        """Record `flight` (`EmbeddingDrain.land`) and let go of its agents. With `certify`,
        an agent the batch embedded first is warmed into its ready certificate under the
        lock still held, so its next turn is hybrid."""
        try:
            report = await self._drain.land(flight)
            if report.embedded and certify is not None and flight.result is not None:
                identity = flight.result[0]
                for agent_id in flight.batch:
                    await self._certify(
                        agent_id, identity=identity, deadline=certify, cancel=flight.cancel
                    )
            return report
        finally:
            self._air.remove(flight)
            self._let_go(list(flight.batch))

    def abandon(self, flight: Flight) -> None:
        """`flight` ends unrecorded (its loop was cancelled): its call is stopped, its rows
        are left for the agents' next pass and its locks are freed. Synchronous."""
        if flight in self._air:
            self._drain.abandon(flight)
            self._air.remove(flight)
            self._let_go(list(flight.batch))

    async def _hold(self, agents: list[str]) -> None:
        taken: list[str] = []
        try:
            for agent_id in sorted(agents):
                if self._locks is not None and not self._holds.get(agent_id):
                    await self._locks.acquire(agent_id)
                self._holds[agent_id] = self._holds.get(agent_id, 0) + 1
                taken.append(agent_id)
        except BaseException:
            self._let_go(taken)
            raise

    def _let_go(self, agents: list[str]) -> None:
        for agent_id in agents:
            left = self._holds[agent_id] - 1
            if left:
                self._holds[agent_id] = left
                continue
            del self._holds[agent_id]
            if self._locks is not None:
                self._locks.release(agent_id)
