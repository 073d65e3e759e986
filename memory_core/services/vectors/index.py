"""Keeps each agent's vector namespace in step with its claims: warm-up, embedding, cleanup.

The claim store is the authority; vectors are a projection (R-STORE-2). Warm-up checks
coverage against the store's ready claims and earns a ready certificate (R-VEC-4); the
embedding drain (`drain_batch.EmbeddingDrain`) moves claims pending → vector written → ready
by revision CAS, and deletes the vector again when the CAS loses (an orphan, R-WRITE-6);
forgetting deletes vectors only after the authoritative delete committed (R-FORGET-1), each
vector delete tracked by a durable cleanup row until it is done (`cleanup`). With no
embedder configured, pending claims become `fts_only`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import AgentMemoryError, IdentityMismatch, StoreError
from memory_core.ports.claims import WHOLE_NAMESPACE, CleanupSource, EmbeddingBookkeeping
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.ports.vectors import ReadyCertificate, VectorStore, VectorStoreCold
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.vectors.cleanup import CleanupQueue
from memory_core.services.vectors.drain_batch import DrainReport, EmbeddingDrain
from memory_core.services.vectors.pipeline import DrainPipeline
from memory_core.services.write.fences import AgentLocks

__all__ = ["VectorIndex"]

log = logging.getLogger(__name__)


class VectorIndex:
    """Per-process manager of ready certificates and the embedding pipeline."""

    def __init__(
        self,
        *,
        store: EmbeddingBookkeeping,
        vectors: VectorStore | None,
        gateway: ProviderGateway | None,
        domain_clock: DomainClock,
        locks: AgentLocks | None = None,
        scheduler: TaskScheduler | None = None,
        infra_clock: InfraClock | None = None,
        batch_limit: int = 200,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._gateway = gateway
        self._clock = domain_clock
        self._certificates: dict[str, ReadyCertificate] = {}
        # Warm-up reads the ready ids and then checks coverage; an embedding pass landing in
        # between would have its fresh vectors deleted as orphans. One lock per agent.
        self._locks = locks
        self._scheduler = scheduler
        self._infra = infra_clock
        self._warming: dict[str, TaskHandle] = {}
        self._config_generation = 1
        self.cleanup = CleanupQueue(store=store, vectors=vectors, on_dropped=self.invalidate)
        self._embedding = EmbeddingDrain(
            store=store,
            vectors=vectors,
            gateway=gateway,
            domain_clock=domain_clock,
            locks=locks,
            forget=self.forget,
            cleanup=self.cleanup,
            batch_limit=batch_limit,
            scheduler=scheduler,
        )

    @property
    def enabled(self) -> bool:
        """Vectors are in play: a vector store and an embedder are both configured."""
        return self._embedding.enabled

    @property
    def vectors(self) -> VectorStore | None:
        return self._vectors

    def certificate(self, agent_id: str) -> ReadyCertificate | None:
        """The agent's certificate if it belongs to the current configuration."""
        certificate = self._certificates.get(agent_id)
        if certificate is None or certificate.config_generation != self._config_generation:
            return None
        return certificate

    def reconfigure(self) -> None:
        """The embedding configuration changed: every certificate is void until re-warmed."""
        self._config_generation += 1
        self._certificates.clear()

    def invalidate(self, agent_id: str) -> None:
        """Forget the agent's certificate (clear, retirement, a revision change seen in recall)."""
        self._certificates.pop(agent_id, None)

    def request_warm(self, agent_id: str, *, seconds: float = 60.0) -> bool:
        """Start embedding what is pending and warming the agent in the background, unless
        that is already running. The read path calls it when it meets a cold agent, so the
        next turns get vectors back (reference §4.3: `vectorCold` kicks off a warm-up)."""
        if not self.enabled or self._scheduler is None or self._infra is None:
            return False
        running = self._warming.get(agent_id)
        if running is not None and not running.done:
            return False
        clock = self._infra

        async def work() -> None:
            deadline = Deadline.after(clock, seconds)
            await self.drain(agent_id, deadline=deadline, cancel=CancellationToken())
            await self.warm(agent_id, deadline=deadline, cancel=CancellationToken())

        self._warming[agent_id] = self._scheduler.spawn(work, name=f"memory-warm:{agent_id}")
        return True

    async def settle(self) -> None:
        """Until background warm-ups have finished (before closing the stores)."""
        for handle in list(self._warming.values()):
            await handle.wait()
        self._warming.clear()

    async def warm(
        self,
        agent_id: str,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        if_cold: bool = False,
    ) -> ReadyCertificate | None:
        """Warm the embedder and the agent's namespace; see `_warm`. `if_cold`: only when
        the agent still has no certificate once the lock is held — a background warm-up
        queued behind another must not warm again (a failing provider would drop the
        certificate the first one earned)."""
        async with self._hold(agent_id):
            if if_cold and (certificate := self.certificate(agent_id)) is not None:
                return certificate
            if self.cleanup.behind(agent_id):
                await self.cleanup.sweep(agent_id, deadline=deadline, cancel=cancel)
            return await self._warm(agent_id, deadline=deadline, cancel=cancel)

    async def finish_cleanups(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        """The start-up sweep: finish every agent's cleanup rows a failure, a cut deadline
        or a kill left (R-FORGET-1), agent by agent under its lock. Returns the ids settled."""
        if self._vectors is None:
            return 0
        settled = 0
        try:
            agents = self.cleanup.agents()
        except StoreError as exc:
            log.warning("vector cleanup sweep deferred: %s", type(exc).__name__)
            return 0
        for agent_id in agents:
            if deadline.expired or cancel.cancelled:
                break
            async with self._hold(agent_id):
                settled += await self.cleanup.sweep(agent_id, deadline=deadline, cancel=cancel)
        return settled

    def note_forgetting(self, agent_id: str, claim_ids: Sequence[str]) -> None:
        """Queue the vector cleanup of claims about to be deleted, BEFORE the delete
        commits, so a kill right after the commit cannot leave their vectors untracked.
        Call with no await between it and the commit: a sweep could otherwise run between
        them, see the claims still READY and keep their vectors."""
        self.cleanup.queue(agent_id, claim_ids, CleanupSource.FORGET)

    def _hold(self, agent_id: str) -> AbstractAsyncContextManager[None]:
        return nullcontext() if self._locks is None else self._locks.hold(agent_id)

    async def drain(
        self,
        agent_id: str,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        progress: Callable[[int], None] | None = None,
    ) -> DrainReport:
        """Embed the agent's pending claims until none are left or time ends; `progress`
        hears the running count of embedded claims after each batch (a reindex's bar)."""
        return await self._embedding.drain(
            agent_id, deadline=deadline, cancel=cancel, progress=progress
        )

    def pipeline(self) -> DrainPipeline:
        """Coalesced batches back to back, each recorded beside the next one's model call
        (`pipeline.DrainPipeline`; the drain loop's, one per run)."""
        return DrainPipeline(drain=self._embedding, locks=self._locks, certify=self._certify)

    async def _certify(
        self,
        agent_id: str,
        *,
        identity: EmbeddingIdentity,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        """Warm an agent with no certificate yet; the caller holds its lock (a pipeline
        that just recorded its first embeddings, with `identity`)."""
        if self.certificate(agent_id) is None:
            await self._warm(agent_id, deadline=deadline, cancel=cancel, embedded=identity)

    async def _warm(
        self,
        agent_id: str,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        embedded: EmbeddingIdentity | None = None,
    ) -> ReadyCertificate | None:
        """Warm the embedder and the agent's namespace; return the certificate or None.
        `embedded`: the identity a batch was just embedded with (see `_embedder`).

        Failures leave the agent cold (recall runs on FTS and records `vectorCold`); they are
        logged by type, never raised into a turn.
        """
        if not self.enabled:
            return None
        assert self._vectors is not None and self._gateway is not None
        try:
            identity = await self._embedder(agent_id, embedded, deadline=deadline, cancel=cancel)
            ready = self._store.list_ready_ids(agent_id, identity)
            try:
                report = await self._vectors.warm(
                    agent_id,
                    identity,
                    ready,
                    config_generation=self._config_generation,
                    deadline=deadline,
                    cancel=cancel,
                )
            except IdentityMismatch:
                # Another model's vectors: never mix them (R-PROV-4). Start the namespace
                # over and let every claim be embedded again with the current model. The
                # reset commits first: it is the journal of the rebuild. Killed after it, the
                # next warm-up still finds the old namespace, mismatches again and finishes;
                # rebuilding first, a kill before the reset left claims `ready` under the old
                # identity beside an empty namespace that coverage never questions (R-VEC-2).
                self._store.reset_embeddings(agent_id, None, now=self._clock.now())
                await self._vectors.rebuild(agent_id, identity, deadline=deadline, cancel=cancel)
                report = await self._vectors.warm(
                    agent_id,
                    identity,
                    (),
                    config_generation=self._config_generation,
                    deadline=deadline,
                    cancel=cancel,
                )
            if report.missing_ids:
                self._store.reset_embeddings(agent_id, report.missing_ids, now=self._clock.now())
        except VectorStoreCold:
            # An agent with nothing embedded and no namespace yet: cold, nothing failed, and
            # the store created nothing for a read (R-HOST-2).
            self._certificates.pop(agent_id, None)
            return None
        except AgentMemoryError as exc:
            log.warning("vector warm-up failed for agent %s: %s", agent_id, type(exc).__name__)
            self._certificates.pop(agent_id, None)
            return None
        self._certificates[agent_id] = report.certificate
        log.info(
            "vector warm-up for agent %s: %d vectors, %d orphans deleted, %d to re-embed",
            agent_id,
            report.vector_count,
            report.orphans_deleted,
            len(report.missing_ids),
        )
        return report.certificate

    async def _embedder(
        self,
        agent_id: str,
        embedded: EmbeddingIdentity | None,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> EmbeddingIdentity:
        """The embedder's identity, warming it unless a batch was just embedded with it and
        its query latency is already measured: the warm-up's call would then only take the
        model's time from the next batch (issue 15)."""
        assert self._gateway is not None
        if embedded is not None and self._gateway.latency_measured(embedded):
            return embedded
        return await self._gateway.warm(agent_id=agent_id, deadline=deadline, cancel=cancel)

    async def forget(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        source: CleanupSource = CleanupSource.FORGET,
    ) -> bool:
        """Delete vectors of claims whose authoritative change already committed.

        A failure is not fatal: the cleanup row queued first (`source`: who asks) stays, and
        the agent's next drain or warm-up, or the next start, finishes it; meanwhile the
        vector has no ready claim and recall never uses it (R-FORGET-1, R-VEC-4).
        """
        if self._vectors is None or not claim_ids:
            return True
        self.cleanup.queue(agent_id, claim_ids, source)
        try:
            await self._vectors.delete(agent_id, claim_ids, deadline=deadline, cancel=cancel)
        except AgentMemoryError as exc:
            log.warning("vector delete deferred for agent %s: %s", agent_id, type(exc).__name__)
            self.invalidate(agent_id)
            self.cleanup.left(agent_id)
            return False
        self.cleanup.finish(agent_id, claim_ids, source)
        return True

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> bool:
        """Remove the agent's whole namespace (clear's vector phase, retirement). Deferred
        (False), the namespace's cleanup row stays for a later pass to drop it."""
        self.invalidate(agent_id)
        if self._vectors is None:
            return True
        self.cleanup.queue(agent_id, [WHOLE_NAMESPACE], CleanupSource.NAMESPACE)
        try:
            await self._vectors.drop_agent(agent_id, deadline=deadline, cancel=cancel)
        except AgentMemoryError as exc:
            log.warning("vector drop deferred for agent %s: %s", agent_id, type(exc).__name__)
            self.cleanup.left(agent_id)
            return False
        self.cleanup.finish(agent_id, [WHOLE_NAMESPACE], CleanupSource.NAMESPACE)
        return True
