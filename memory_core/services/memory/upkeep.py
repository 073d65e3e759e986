"""Upkeep: warming and draining embeddings, re-embedding an agent, importing history,
startup repair, and background maintenance — its lifecycle, a pass on demand, its audit
trail (R-VEC-4, R-PROV-4, R-TIME-4, R-SCOPE-4, R-MAINT-2)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import attrs

from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.claims import Claim, ClaimDraft, WriteOrigin
from memory_core.domain.errors import ConfigError, ValidationError
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.validation import check_enum, check_id, check_int
from memory_core.ports.claims import (
    MAX_DIRTY_BATCH,
    AuditEvent,
    Conflict,
    InsertOutcome,
    PersonaVersion,
    PersonaView,
    RepairReport,
    Resolution,
)
from memory_core.services.maintenance import MaintenanceService, MaintenanceStatus, PassReport
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
    _maintenance: MaintenanceService | None = None

    @property
    def maintenance(self) -> MaintenanceService:
        """The background maintenance service (built on first use, from this facade's
        ports and settings); `start_maintenance` arms its timers."""
        if self._maintenance is None:
            self._maintenance = MaintenanceService(
                store=self.store,
                index=self.index,
                gateway=self.gateway,
                coordinator=self._coordinator,
                scheduler=self._scheduler,
                domain_clock=self._clock,
                infra_clock=self._infra,
                settings=self.settings,
                on_pass_ended=self.working.schedule,
            )
        return self._maintenance

    def start_maintenance(self) -> None:
        """Arm the maintenance timers (a host calls it once its loop runs, and after a
        `stop_maintenance` to resume)."""
        self.maintenance.start()

    def stop_maintenance(self) -> None:
        """Synchronous: timers cleared, new passes refused, passes in flight fenced and
        their provider calls aborted (R-MAINT-2). Follow with `drain_maintenance`."""
        self.maintenance.stop()

    async def drain_maintenance(self, timeout: float | None = None) -> None:
        """Wait for stopped passes to settle; MaintenanceDrainTimeout past `timeout`."""
        await self.maintenance.drain(timeout)

    def maintenance_status(self) -> MaintenanceStatus:
        return self.maintenance.status()

    async def run_maintenance(
        self,
        agent_id: str,
        *,
        heavy: bool | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> PassReport:
        """One maintenance pass of the agent now (`heavy=True` asks for the model pass;
        without a text provider the cheap pass runs and says `skipped='missing-model'`)."""
        validate_agent_id(agent_id)
        if heavy is not None and not isinstance(heavy, bool):
            raise ValidationError("heavy", "must be a bool or None")
        return await self.maintenance.run_pass(agent_id, heavy=heavy, progress=progress)

    def list_conflicts(self, agent_id: str, *, limit: int = 50) -> Sequence[Conflict]:
        """Open challenges, oldest first: each a challenger (never recalled) and its target."""
        validate_agent_id(agent_id)
        return self.store.list_conflicts(agent_id, limit=check_int(limit, "limit", minimum=1))

    async def resolve_conflict(
        self, agent_id: str, challenger_id: str, resolution: Resolution | str
    ) -> Claim:
        """The user's resolution (reference §7.8): `keep_target`, `keep_challenger` or
        `keep_both`, with lineage, in one transaction. Returns the claim that stands; the
        losers' vectors go, a re-activated challenger is embedded."""
        validate_agent_id(agent_id)
        check_id(challenger_id, "challenger_id")
        chosen = check_enum(resolution, Resolution, "resolution")
        async with self._coordinator.exclusive(agent_id):
            standing = self.store.resolve_conflict(
                agent_id, challenger_id, chosen, actor="user", now=self._clock.now()
            )
        losers = [challenger_id] if standing.id != challenger_id else []
        if chosen is Resolution.KEEP_CHALLENGER:
            losers = [
                e.parent_id
                for e in self.store.list_derivations(agent_id, challenger_id)
                if e.child_id == challenger_id
            ]
        await self.index.forget(
            agent_id,
            losers,
            deadline=self._deadline(self.settings.vector_clear_seconds),
            cancel=CancellationToken(),
        )
        self._schedule_embedding(agent_id)
        return standing

    def persona(self, agent_id: str) -> PersonaView:
        """The agent's active self-model and the pending draft (with its change ratio and
        whether it needs a closer review)."""
        validate_agent_id(agent_id)
        return self.store.persona(agent_id)

    async def approve_persona(self, agent_id: str, draft_id: str) -> PersonaVersion:
        """The user's approval: the only way a persona draft becomes active (§8.6)."""
        validate_agent_id(agent_id)
        check_id(draft_id, "draft_id")
        async with self._coordinator.exclusive(agent_id):
            return self.store.approve_persona(agent_id, draft_id, now=self._clock.now())

    async def reject_persona(self, agent_id: str, draft_id: str) -> PersonaVersion:
        validate_agent_id(agent_id)
        check_id(draft_id, "draft_id")
        async with self._coordinator.exclusive(agent_id):
            return self.store.reject_persona(agent_id, draft_id, now=self._clock.now())

    async def rollback_persona(self, agent_id: str) -> PersonaVersion:
        """The user's undo of the last approval: the previous version is active again."""
        validate_agent_id(agent_id)
        async with self._coordinator.exclusive(agent_id):
            return self.store.rollback_persona(agent_id, now=self._clock.now())

    def dirty_seeds(self, agent_id: str) -> int:
        """How many of the agent's claims wait for consolidation (capped at 256)."""
        validate_agent_id(agent_id)
        return len(self.store.list_dirty(agent_id, limit=MAX_DIRTY_BATCH))

    def audit_events(self, agent_id: str, *, limit: int = 50) -> Sequence[AuditEvent]:
        """The agent's audit trail, newest first: ids, counts and actions, never content."""
        validate_agent_id(agent_id)
        return self.store.list_audit(agent_id, limit=check_int(limit, "limit", minimum=1))

    async def quiesce(self, timeout: float | None = None) -> None:
        """The host's shutdown order up to closing (R-HOST-1): stop new work (maintenance
        timers and passes refused), fence memory (every session refuses new turns, work in
        flight is fenced), drain (sessions, then maintenance — MaintenanceDrainTimeout
        rather than return under an unsettled pass). Then `aclose()`, the host's operation,
        reopen, and `resume()` on the reopened memory."""
        maintenance = self.maintenance
        maintenance.stop()
        for runtime in self._sessions.values():
            runtime.close()
        for runtime in self._sessions.values():
            await runtime.drain()
        await maintenance.drain(timeout)

    def resume(self) -> None:
        """After a reopen: background maintenance is armed again (its startup pass picks up
        the dirty work left behind). Sessions resume through `session(...)`."""
        self.maintenance.start()

    async def aclose(self) -> None:
        """Maintenance stops and drains before anything closes: a pass never runs on a
        closed store (a drain that times out raises, and the stores stay open)."""
        if self._maintenance is not None:
            self._maintenance.stop()
            await self._maintenance.drain()
        await super().aclose()

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

    def on_committed(self, agent_id: str, claim_ids: Sequence[str]) -> None:
        """Ingestion's commit hook: the new claims wait for the coalesced embedding drain
        (which also certifies a new agent), and maintenance's debounce restarts. Returns at
        once: the chain moves on to its next chunk while the drain gathers a batch."""
        if claim_ids:
            if self._maintenance is not None:
                self._maintenance.notify_write(agent_id)
            self.embedding_drain.mark(agent_id, len(claim_ids))

    async def settle_committed(self, agent_id: str) -> None:
        """Ingestion's settle hook: until what commits marked so far is embedded (a session's
        `drain` returns with its claims in the vector lane, as before the drain coalesced)."""
        await self.embedding_drain.settle()

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
