"""Keeps each agent's vector namespace in step with its claims: warm-up, embedding, cleanup.

The claim store is the authority; vectors are a projection (R-STORE-2). Warm-up checks
coverage against the store's ready claims and earns a ready certificate (R-VEC-4); the
embedding drain moves claims pending → vector written → ready by revision CAS, and deletes
the vector again when the CAS loses (an orphan, R-WRITE-6); forgetting deletes vectors only
after the authoritative delete committed (R-FORGET-1). With no embedder configured,
pending claims become `fts_only`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim, EmbeddingIdentity
from memory_core.domain.errors import (
    AgentMemoryError,
    DeadlineExceeded,
    IdentityMismatch,
    OperationCancelled,
    ProviderError,
    ProviderResponseError,
    StoreError,
)
from memory_core.ports.claims import EmbeddingBookkeeping, EmbeddingMark
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.ports.vectors import ReadyCertificate, VectorStore, VectorStoreCold
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.write.fences import AgentLocks

__all__ = ["DrainReport", "VectorIndex"]

log = logging.getLogger(__name__)


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
        self._batch_limit = batch_limit
        self._certificates: dict[str, ReadyCertificate] = {}
        # Warm-up reads the ready ids and then checks coverage; an embedding pass landing in
        # between would have its fresh vectors deleted as orphans. One lock per agent.
        self._locks = locks
        self._scheduler = scheduler
        self._infra = infra_clock
        self._warming: dict[str, TaskHandle] = {}
        self._config_generation = 1

    @property
    def enabled(self) -> bool:
        """Vectors are in play: a vector store and an embedder are both configured."""
        return (
            self._vectors is not None
            and self._gateway is not None
            and self._gateway.embedding_configured
        )

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
        if self._locks is None:
            if if_cold and (certificate := self.certificate(agent_id)) is not None:
                return certificate
            return await self._warm(agent_id, deadline=deadline, cancel=cancel)
        async with self._locks.hold(agent_id):
            if if_cold and (certificate := self.certificate(agent_id)) is not None:
                return certificate
            return await self._warm(agent_id, deadline=deadline, cancel=cancel)

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
        if self._locks is None:
            return await self._drain(agent_id, deadline=deadline, cancel=cancel, progress=progress)
        async with self._locks.hold(agent_id):
            return await self._drain(agent_id, deadline=deadline, cancel=cancel, progress=progress)

    async def _warm(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> ReadyCertificate | None:
        """Warm the embedder and the agent's namespace; return the certificate or None.

        Failures leave the agent cold (recall runs on FTS and records `vectorCold`); they are
        logged by type, never raised into a turn.
        """
        if not self.enabled:
            return None
        assert self._vectors is not None and self._gateway is not None
        try:
            identity = await self._gateway.warm(agent_id=agent_id, deadline=deadline, cancel=cancel)
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

    async def drain_agents(
        self,
        agent_ids: Sequence[str],
        *,
        limit: int,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> tuple[DrainReport, list[str]]:
        """One coalesced batch: up to `limit` pending claims of `agent_ids`, taken agent by
        agent in the order given, embedded in one model call (`_embed_batch`). Returns the
        report and the agents that may still have claims pending (their listing filled the
        room that was left), so the caller takes them again."""
        async with AsyncExitStack() as held:
            if self._locks is not None:
                # Sorted: two drains over overlapping agents can never wait on each other.
                for agent_id in sorted(set(agent_ids)):
                    await held.enter_async_context(self._locks.hold(agent_id))
            batch: dict[str, list[Claim]] = {}
            more: list[str] = []
            room, order = limit, list(dict.fromkeys(agent_ids))
            for position, agent_id in enumerate(order):
                pending = list(self._store.list_pending_embeddings(agent_id, limit=room))
                if pending:
                    batch[agent_id] = pending
                    room -= len(pending)
                if room == 0:
                    more = order[position:]  # this one may have more; the rest were not asked
                    break
            return await self._embed_batch(batch, deadline=deadline, cancel=cancel), more

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
            report = await self._embed_batch(
                {agent_id: list(pending)}, deadline=deadline, cancel=cancel
            )
            total = total.plus(report)
            if progress is not None:
                progress(total.embedded)
            if report.failed or len(pending) < self._batch_limit:
                break
        return total

    async def _embed_batch(
        self,
        batch: dict[str, list[Claim]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> DrainReport:
        """Embed one batch of pending claims (of one agent or several) with one model call,
        write each agent's vectors in one vector-store call, and record every outcome in
        one claim-store transaction (`mark_embeddings`): per batch, not per claim.

        Each state moves pending → vector written → ready by revision CAS; a lost CAS (the
        claim was edited, deleted or fenced meanwhile) deletes its vector again, so a claim
        deleted while queued keeps no vector (R-WRITE-6, R-VEC-4)."""
        claims = [claim for pending in batch.values() for claim in pending]
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
        assert self._vectors is not None and self._gateway is not None
        try:
            # The gateway accounts a call to one agent: the batch's first. A clear of another
            # agent in it does not abort the call, but fences its marks (the CAS loses and
            # the vectors are deleted again below).
            identity, vectors, poisoned = await self._embed_isolating(
                next(iter(batch)), claims, deadline=deadline, cancel=cancel
            )
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
        # claims stay pending for the next drain (vectors already written are orphans,
        # never recalled, and removed by the next warm-up's coverage check).
        except (ProviderError, StoreError, DeadlineExceeded, OperationCancelled) as exc:
            agents = ", ".join(batch)
            log.warning("embedding drain failed for agent %s: %s", agents, type(exc).__name__)
            return DrainReport(failed=True)
        for claim_id in refused:
            log.warning("embedding of claim %s refused by the provider: marked error", claim_id)
        losers: dict[str, list[str]] = {}
        embedded = rejected = 0
        for claim, ok in zip(written, marked, strict=True):
            if claim.id in refused:
                rejected += ok
            elif ok:
                embedded += 1
            else:
                losers.setdefault(owner[claim.id], []).append(claim.id)
        for agent_id, ids in losers.items():
            await self.forget(agent_id, ids, deadline=deadline, cancel=cancel)
        return DrainReport(
            embedded=embedded, lost_races=sum(map(len, losers.values())), rejected=rejected
        )

    async def _embed_isolating(
        self,
        agent_id: str,
        claims: Sequence[Claim],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> tuple[EmbeddingIdentity, dict[str, tuple[float, ...]], list[Claim]]:
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

    async def forget(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> bool:
        """Delete vectors of claims whose authoritative change already committed.

        A failure is not fatal: without a ready claim the vector is an orphan, never used by
        recall, and removed at the next warm-up's coverage check (R-VEC-4).
        """
        if self._vectors is None or not claim_ids:
            return True
        try:
            await self._vectors.delete(agent_id, claim_ids, deadline=deadline, cancel=cancel)
        except AgentMemoryError as exc:
            log.warning("vector delete deferred for agent %s: %s", agent_id, type(exc).__name__)
            self.invalidate(agent_id)
            return False
        return True

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> bool:
        """Remove the agent's whole namespace (clear's vector phase, retirement)."""
        self.invalidate(agent_id)
        if self._vectors is None:
            return True
        try:
            await self._vectors.drop_agent(agent_id, deadline=deadline, cancel=cancel)
        except AgentMemoryError as exc:
            log.warning("vector drop deferred for agent %s: %s", agent_id, type(exc).__name__)
            return False
        return True
