"""Maintenance, conflicts, persona, audit and the embedding upkeep (`MemoryUpkeep`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from memory_core.domain.claims import Claim, ClaimDraft
from memory_core.ports.claims import (
    AuditEvent,
    Conflict,
    InsertOutcome,
    PersonaVersion,
    PersonaView,
    RepairReport,
    Resolution,
)
from memory_core.services.maintenance import MaintenanceStatus, PassReport
from memory_core.services.memory import ReindexReport
from memory_plugins.api.loop import SyncLoop

__all__ = ["SyncUpkeep"]


class SyncUpkeep(SyncLoop):
    def start_maintenance(self) -> None:
        self._run_sync(lambda m: m.start_maintenance())

    def stop_maintenance(self) -> None:
        self._run_sync(lambda m: m.stop_maintenance())

    def drain_maintenance(self, timeout: float | None = None) -> None:
        self.run(lambda m: m.drain_maintenance(timeout))

    def maintenance_status(self) -> MaintenanceStatus:
        return self._run_sync(lambda m: m.maintenance_status())

    def run_maintenance(
        self,
        agent_id: str,
        *,
        heavy: bool | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> PassReport:
        return self.run(lambda m: m.run_maintenance(agent_id, heavy=heavy, progress=progress))

    def quiesce(self, timeout: float | None = None) -> None:
        self.run(lambda m: m.quiesce(timeout))

    def resume(self) -> None:
        self._run_sync(lambda m: m.resume())

    def dirty_seeds(self, agent_id: str) -> int:
        return self._run_sync(lambda m: m.dirty_seeds(agent_id))

    def list_conflicts(self, agent_id: str, *, limit: int = 50) -> Sequence[Conflict]:
        return self._run_sync(lambda m: m.list_conflicts(agent_id, limit=limit))

    def resolve_conflict(
        self, agent_id: str, challenger_id: str, resolution: Resolution | str
    ) -> Claim:
        return self.run(lambda m: m.resolve_conflict(agent_id, challenger_id, resolution))

    def persona(self, agent_id: str) -> PersonaView:
        return self._run_sync(lambda m: m.persona(agent_id))

    def approve_persona(self, agent_id: str, draft_id: str) -> PersonaVersion:
        return self.run(lambda m: m.approve_persona(agent_id, draft_id))

    def reject_persona(self, agent_id: str, draft_id: str) -> PersonaVersion:
        return self.run(lambda m: m.reject_persona(agent_id, draft_id))

    def rollback_persona(self, agent_id: str) -> PersonaVersion:
        return self.run(lambda m: m.rollback_persona(agent_id))

    def audit_events(self, agent_id: str, *, limit: int = 50) -> Sequence[AuditEvent]:
        return self._run_sync(lambda m: m.audit_events(agent_id, limit=limit))

    def now(self) -> datetime:
        return self._run_sync(lambda m: m.now())

    def warm(self, agent_id: str) -> bool:
        return self.run(lambda m: m.warm(agent_id))

    def embed_pending(self, agent_id: str) -> int:
        return self.run(lambda m: m.embed_pending(agent_id))

    def pending_embeddings(self, agent_id: str) -> int:
        return self._run_sync(lambda m: m.pending_embeddings(agent_id))

    def reindex(
        self, agent_id: str, *, progress: Callable[[int, int], None] | None = None
    ) -> ReindexReport:
        """Re-embed the agent; `progress` is called on the memory's loop thread."""
        return self.run(lambda m: m.reindex(agent_id, progress=progress))

    def import_claims(
        self, agent_id: str, drafts: Sequence[ClaimDraft], *, recorded_at: datetime
    ) -> Sequence[InsertOutcome]:
        return self.run(lambda m: m.import_claims(agent_id, drafts, recorded_at=recorded_at))

    def repair(self) -> RepairReport:
        return self._run_sync(lambda m: m.repair())
