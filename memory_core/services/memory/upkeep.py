"""Upkeep: warming and draining embeddings, re-embedding an agent, importing history,
startup repair (R-VEC-4, R-PROV-4, R-TIME-4, R-SCOPE-4)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import attrs

from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.errors import ConfigError, ValidationError
from memory_core.domain.scope import validate_agent_id
from memory_core.ports.claims import InsertOutcome, RepairReport
from memory_core.services.memory.parts import MemoryParts

__all__ = ["MemoryUpkeep", "ReindexReport"]

# Bound on one pending-count read: a count, not a page a person reads.
_COUNT_LIMIT = 1_000_000


@attrs.frozen(kw_only=True)
class ReindexReport:
    agent: str
    claims: int  # claims queued for embedding again
    embedded: int
    pending: int  # left pending: the provider or vector store failed part-way
    ready: bool  # a ready certificate was earned: vector recall is on


class MemoryUpkeep(MemoryParts):
    def now(self) -> datetime:
        """Business time of the memory's clock (what temporal labels are read against)."""
        return self._clock.now()

    async def warm(self, agent_id: str) -> bool:
        """Embed what is pending and earn the agent's ready certificate; False when vectors
        are off or unavailable (recall then runs on FTS alone)."""
        validate_agent_id(agent_id)
        await self.embed_pending(agent_id)
        certificate = await self.index.warm(
            agent_id,
            deadline=self._deadline(self.settings.embedding_pass_seconds),
            cancel=CancellationToken(),
        )
        return certificate is not None

    def pending_embeddings(self, agent_id: str) -> int:
        """How many of the agent's recallable claims wait for their embedding."""
        validate_agent_id(agent_id)
        return len(self.store.list_pending_embeddings(agent_id, limit=_COUNT_LIMIT))

    async def on_committed(self, agent_id: str, claim_ids: Sequence[str]) -> None:
        """Ingestion's commit hook: embed the new claims (and certify a new agent)."""
        if claim_ids:
            await self._embed_and_certify(agent_id)

    async def reindex(
        self, agent_id: str, *, progress: Callable[[int, int], None] | None = None
    ) -> ReindexReport:
        """Embed every claim of the agent again with the configured embedder: the way back
        after an embedder change or a damaged vector file (R-PROV-4). Claims are touched
        only in their embedding state. `progress(embedded, queued)` follows the drain."""
        validate_agent_id(agent_id)
        if not self.index.enabled:
            raise ConfigError(
                "reindex needs an embedding_provider and a vector_store (one is 'none')"
            )
        self.index.invalidate(agent_id)
        # Warm first: a namespace of another model is rebuilt empty here (R-PROV-4), so the
        # drain below writes into one made for the configured embedder.
        await self.warm(agent_id)
        async with self._coordinator.exclusive(agent_id):
            self.store.reset_embeddings(agent_id, None, now=self._clock.now())
        queued = self.pending_embeddings(agent_id)
        if progress is not None:
            progress(0, queued)
        report = await self.index.drain(
            agent_id,
            deadline=self._deadline(self.settings.embedding_pass_seconds),
            cancel=CancellationToken(),
            progress=None if progress is None else lambda done: progress(done, queued),
        )
        # The last warm-up deletes orphan vectors and earns a fresh certificate (R-VEC-4).
        ready = await self.warm(agent_id)
        return ReindexReport(
            agent=agent_id,
            claims=queued,
            embedded=report.embedded,
            pending=self.pending_embeddings(agent_id),
            ready=ready,
        )

    async def import_claims(
        self, agent_id: str, drafts: Sequence[ClaimDraft], *, recorded_at: datetime
    ) -> Sequence[InsertOutcome]:
        """Import history written elsewhere, in one transaction, as of `recorded_at` (an
        evaluation's seeded past). Never releases a tombstone (R-WRITE-5); the imported
        claims are embedded in the background."""
        validate_agent_id(agent_id)
        foreign = [draft.agent_id for draft in drafts if draft.agent_id != agent_id]
        if foreign:
            raise ValidationError("drafts", f"owned by {foreign[0]!r}, not {agent_id!r}")
        async with self._coordinator.exclusive(agent_id):
            outcomes = self.store.insert_many(drafts, origin=WriteOrigin.IMPORT, now=recorded_at)
        self._schedule_embedding(agent_id)
        return outcomes

    def repair(self) -> RepairReport:
        """Startup repair of stored temporal and scope metadata (R-TIME-4, R-SCOPE-4)."""
        return self.store.repair(now=self._clock.now())
