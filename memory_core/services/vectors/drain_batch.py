"""One embedding batch: pending claims of one agent or several, embedded in one model call
and recorded in one claim-store transaction (R-WRITE-6, R-VEC-4; issue 15).

Each claim moves pending → vector written → ready by revision CAS, and its vector is deleted
again when the CAS loses (an orphan: the claim was edited, deleted or fenced meanwhile). A
text the provider refuses on its own is isolated by halving the batch and marked terminally
failed, so it cannot hold the others back. `drain_loop.DrainLoop` coalesces commits into
these batches; `VectorIndex.drain` (reindex, maintenance, a cold agent's warm-up) runs them
directly.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from contextlib import AsyncExitStack
from typing import Protocol

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import (
    DeadlineExceeded,
    OperationCancelled,
    ProviderError,
    ProviderResponseError,
    StoreError,
)
from memory_core.ports.claims import (
    CleanupSource,
    EmbeddingBookkeeping,
    EmbeddingMark,
    PendingEmbedding,
)
from memory_core.ports.clock import DomainClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.ports.vectors import VectorStore
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.vectors.cleanup import CleanupQueue
from memory_core.services.write.fences import AgentLocks

__all__ = ["DrainReport", "EmbeddingDrain", "Flight", "VectorForget"]

log = logging.getLogger(__name__)


class VectorForget(Protocol):
    """Deletes vectors of claims whose authoritative change committed (`VectorIndex.forget`)."""

    def __call__(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        source: CleanupSource,
    ) -> Awaitable[bool]: ...


@attrs.frozen(kw_only=True)
class DrainReport:
    """What one drain pass did: counts only."""

    embedded: int = 0
    lost_races: int = 0  # CAS lost: the vector was deleted again
    fts_only: int = 0  # no embedder: marked fts_only
    rejected: int = 0  # the provider refused the text alone: marked error (terminal)
    failed: bool = False  # the provider or vector store failed; rows stay pending

    def plus(self, other: DrainReport) -> DrainReport:
        return DrainReport(
            embedded=self.embedded + other.embedded,
            lost_races=self.lost_races + other.lost_races,
            fts_only=self.fts_only + other.fts_only,
            rejected=self.rejected + other.rejected,
            failed=self.failed or other.failed,
        )


Embedded = tuple[EmbeddingIdentity, dict[str, tuple[float, ...]], list[PendingEmbedding]]


@attrs.define(eq=False)
class Flight:
    """One batch from its cleanup rows to its record (`EmbeddingDrain.launch` → `land`);
    its model call may run in `call` meanwhile, keeping its outcome here."""

    batch: dict[str, list[PendingEmbedding]]
    deadline: Deadline
    cancel: CancellationToken
    queued: list[str] = attrs.field(factory=list)  # agents whose cleanup rows are queued
    call: TaskHandle | None = None
    result: Embedded | None = None
    error: BaseException | None = None

    @property
    def claims(self) -> list[PendingEmbedding]:
        return [claim for pending in self.batch.values() for claim in pending]

    @property
    def claim_ids(self) -> set[str]:
        return {claim.id for pending in self.batch.values() for claim in pending}

    async def called(self) -> None:
        """Until the model call has settled (at once when it runs in `land`)."""
        if self.call is not None:
            await self.call.wait()


class EmbeddingDrain:
    """Embeds pending claims batch by batch, under the agents' locks (the vector index's: a
    warm-up's coverage check must not see a batch half written)."""

    def __init__(
        self,
        *,
        store: EmbeddingBookkeeping,
        vectors: VectorStore | None,
        gateway: ProviderGateway | None,
        domain_clock: DomainClock,
        locks: AgentLocks | None,
        forget: VectorForget,
        cleanup: CleanupQueue,
        batch_limit: int,
        scheduler: TaskScheduler | None = None,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._gateway = gateway
        self._clock = domain_clock
        self._locks = locks
        self._forget = forget
        self._cleanup = cleanup
        self._batch_limit = batch_limit
        self._scheduler = scheduler  # runs a model call beside another batch's record

    @property
    def enabled(self) -> bool:
        """Vectors are in play: a vector store and an embedder are both configured."""
        return (
            self._vectors is not None
            and self._gateway is not None
            and self._gateway.embedding_configured
        )

    async def drain(
        self,
        agent_id: str,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        progress: Callable[[int], None] | None = None,
    ) -> DrainReport:
        """Embed the agent's pending claims; see `_drain`. `progress` hears the running
        count of embedded claims after each batch (a reindex's progress bar)."""
        async with AsyncExitStack() as held:
            if self._locks is not None:
                await held.enter_async_context(self._locks.hold(agent_id))
            await self.sweep([agent_id], deadline=deadline, cancel=cancel)
            return await self._drain(agent_id, deadline=deadline, cancel=cancel, progress=progress)

    async def sweep(
        self, agent_ids: Sequence[str], *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        """Finish what an earlier batch or delete left. Call holding the agents' locks, and
        with no batch of theirs in the air (its rows are queued, its vectors not written)."""
        for agent_id in dict.fromkeys(agent_ids):
            if self._cleanup.behind(agent_id):
                await self._cleanup.sweep(agent_id, deadline=deadline, cancel=cancel)

    async def _drain(
        self,
        agent_id: str,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        progress: Callable[[int], None] | None,
    ) -> DrainReport:
        """Embed the agent's pending claims, batch by batch, until none are left or time ends."""
        total = DrainReport()
        while not deadline.expired and not cancel.cancelled:
            pending = self._store.list_pending_embeddings(agent_id, limit=self._batch_limit)
            if not pending:
                break
            flight = self.launch({agent_id: list(pending)}, deadline=deadline, cancel=cancel)
            report = await self.land(flight)
            total = total.plus(report)
            if progress is not None:
                progress(total.embedded)
            if report.failed or len(pending) < self._batch_limit:
                break
        return total

    def take(
        self, agent_ids: Sequence[str], *, limit: int, busy: Collection[str] = ()
    ) -> tuple[dict[str, list[PendingEmbedding]], list[str]]:
        """Up to `limit` pending claims of `agent_ids`, agent by agent in the order given,
        none of `busy` (a batch in the air: still pending until it is recorded). Returns
        the batch and the agents that may still have claims pending (their listing filled
        the room that was left), so the caller takes them again. Call holding the locks."""
        batch: dict[str, list[PendingEmbedding]] = {}
        room, order = limit, list(dict.fromkeys(agent_ids))
        for position, agent_id in enumerate(order):
            listed = self._store.list_pending_embeddings(agent_id, limit=room + len(busy))
            pending = [claim for claim in listed if claim.id not in busy][:room]
            if pending:
                batch[agent_id] = pending
                room -= len(pending)
            if room == 0:
                return batch, order[position:]  # this one may have more; the rest not asked
        return batch, []

    def launch(
        self,
        batch: dict[str, list[PendingEmbedding]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        background: bool = False,
    ) -> Flight:
        """Queue the batch's cleanup rows, then start its model call: in the background
        when `background` (the caller records another batch meanwhile), else `land` makes
        it. The rows come first, so no vector is ever written without one (R-FORGET-1);
        and a claim store that refuses them (its lock held elsewhere) costs no call."""
        flight = Flight(batch=batch, deadline=deadline, cancel=cancel)
        if not flight.claims or not self.enabled:
            return flight
        try:
            for agent_id, pending in batch.items():
                ids = [claim.id for claim in pending]
                self._store.queue_vector_cleanup(agent_id, ids, source=CleanupSource.DRAIN)
                flight.queued.append(agent_id)
        except Exception as exc:
            flight.error = exc
            return flight
        if background and self._scheduler is not None:
            flight.call = self._scheduler.spawn(
                lambda: self._call(flight), name="memory-embed-call"
            )
        return flight

    async def land(self, flight: Flight) -> DrainReport:
        """Finish `flight`: wait for its model call, write each agent's vectors in one
        vector-store call, and record every outcome in one claim-store transaction
        (`mark_embeddings`): per batch, not per claim.

        Each state moves pending → vector written → ready by revision CAS; a lost CAS (the
        claim was edited, deleted or fenced meanwhile) deletes its vector again, so a claim
        deleted while queued or during its model call keeps no vector (R-WRITE-6, R-VEC-4).
        Only an outcome settled — the CAS won, or the vector deleted again — finishes a
        cleanup row: a failure, a cut deadline or a kill anywhere after the write leaves the
        row for the agent's next pass (R-FORGET-1)."""
        claims, batch = flight.claims, flight.batch
        if not claims:
            return DrainReport()
        owner = {claim.id: agent_id for agent_id, pending in batch.items() for claim in pending}
        if not self.enabled:
            marks = [
                EmbeddingMark(
                    agent_id=owner[claim.id],
                    claim_id=claim.id,
                    expected_revision=claim.revision,
                    identity=None,
                    ready=False,
                )
                for claim in claims
            ]
            marked = self._store.mark_embeddings(marks, now=self._clock.now())
            return DrainReport(fts_only=sum(marked))
        assert self._vectors is not None
        try:
            if flight.call is None and flight.error is None:
                await self._call(flight)
            elif flight.call is not None:
                await flight.call.wait()
            if flight.error is not None:
                raise flight.error
            if flight.result is None:  # the call's task was cancelled before it ran
                raise OperationCancelled("embedding call cancelled")
            identity, vectors, poisoned = flight.result
            deadline, cancel = flight.deadline, flight.cancel
            for agent_id, pending in batch.items():
                theirs = {claim.id: vectors[claim.id] for claim in pending if claim.id in vectors}
                if theirs:
                    await self._vectors.upsert(
                        agent_id, identity, theirs, deadline=deadline, cancel=cancel
                    )
            refused = {claim.id for claim in poisoned}
            written = [claim for claim in claims if claim.id in vectors or claim.id in refused]
            # Terminal and content-free: the ERROR state says the provider refused this
            # text, the log names the claim id only; the drain no longer lists it.
            marked = self._store.mark_embeddings(
                [
                    EmbeddingMark(
                        agent_id=owner[claim.id],
                        claim_id=claim.id,
                        expected_revision=claim.revision,
                        identity=identity,
                        ready=claim.id not in refused,
                    )
                    for claim in written
                ],
                now=self._clock.now(),
            )
        # Time running out or a cancel mid-batch ends the drain like a failed call: the
        # claims stay pending for the next drain, and the vectors already written keep
        # their cleanup rows (never recalled meanwhile: no ready claim).
        except (ProviderError, StoreError, DeadlineExceeded, OperationCancelled) as exc:
            agents = ", ".join(batch)
            log.warning("embedding drain failed for agent %s: %s", agents, type(exc).__name__)
            self.abandon(flight)
            return DrainReport(failed=True)
        except BaseException:
            self.abandon(flight)
            raise
        for claim_id in refused:
            log.warning("embedding of claim %s refused by the provider: marked error", claim_id)
        losers: dict[str, list[str]] = {}
        settled: dict[str, list[str]] = {}
        embedded = rejected = 0
        for claim, ok in zip(written, marked, strict=True):
            if claim.id in refused:
                rejected += ok
            elif ok:
                embedded += 1
            else:
                losers.setdefault(owner[claim.id], []).append(claim.id)
        lost = {claim_id for ids in losers.values() for claim_id in ids}
        for claim in claims:  # settled: the CAS won, or no vector was written (refused)
            if claim.id not in lost:
                settled.setdefault(owner[claim.id], []).append(claim.id)
        for agent_id, ids in settled.items():
            self._cleanup.finish(agent_id, ids, CleanupSource.DRAIN)
        for agent_id, ids in losers.items():
            await self._forget(
                agent_id, ids, deadline=deadline, cancel=cancel, source=CleanupSource.DRAIN
            )
        return DrainReport(
            embedded=embedded, lost_races=sum(map(len, losers.values())), rejected=rejected
        )

    def abandon(self, flight: Flight) -> None:
        """`flight` ends unrecorded (failed, cut, or its drain went away): stop its call and
        leave its cleanup rows for the agents' next pass (no ready claim meanwhile)."""
        if flight.call is not None:
            flight.call.cancel()
        for agent_id in flight.queued:
            self._cleanup.left(agent_id)

    async def _call(self, flight: Flight) -> None:
        """The model call of `flight`, its outcome kept on it (a task reports nothing)."""
        assert self._gateway is not None
        try:
            flight.result = await self._embed_isolating(
                next(iter(flight.batch)),
                flight.claims,
                deadline=flight.deadline,
                cancel=flight.cancel,
            )
        except Exception as exc:
            flight.error = exc
        except BaseException:
            flight.error = OperationCancelled("embedding call cancelled")
            raise

    async def _embed_isolating(
        self,
        agent_id: str,
        claims: Sequence[PendingEmbedding],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> tuple[EmbeddingIdentity, dict[str, tuple[float, ...]], list[PendingEmbedding]]:
        """Vectors by claim id, and the claims the provider refuses on their own.

        A batch is all or nothing at the provider, so one text it always rejects (a 4xx:
        `ProviderResponseError`) would keep every claim pending forever. A rejected batch is
        halved until the refused texts stand alone — about 2·log2(n) extra calls per poison
        claim. Retryable failures (outage, deadline, cancel) propagate: nothing is terminal.
        """
        assert self._gateway is not None
        try:
            batch = await self._gateway.embed_batch(
                agent_id=agent_id,
                texts=[claim.content for claim in claims],
                deadline=deadline,
                cancel=cancel,
            )
        except ProviderResponseError:
            if len(claims) == 1:
                identity = await self._gateway.identity(
                    agent_id=agent_id, deadline=deadline, cancel=cancel
                )
                return identity, {}, list(claims)
            middle = len(claims) // 2
            identity, vectors, poisoned = await self._embed_isolating(
                agent_id, claims[:middle], deadline=deadline, cancel=cancel
            )
            _, more_vectors, more_poisoned = await self._embed_isolating(
                agent_id, claims[middle:], deadline=deadline, cancel=cancel
            )
            return identity, {**vectors, **more_vectors}, [*poisoned, *more_poisoned]
        vectors = {claim.id: vector for claim, vector in zip(claims, batch.vectors, strict=True)}
        return batch.identity, vectors, []
