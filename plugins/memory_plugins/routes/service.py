"""`MemoryRoutes`: every management route as one method returning DTOs (see the package
docstring). Validation errors of the facade pass through unchanged — they are the typed,
content-free errors an HTTP layer maps to 4xx.

Routes, by group:
- claims: `list_claims` (keyset pages), `get_claim`, `search`, `add_claim`,
  `update_claim`, `archive_claim`, `restore_claim`, `delete_claim`, `claim_source` (its
  effective span);
- conflicts: `list_conflicts`, `resolve_conflict`;
- persona: `persona`, `approve_persona`, `reject_persona`, `rollback_persona`;
- directives: `list_directives`, `create_directive`, `approve_directive`,
  `reject_directive`;
- upkeep: `health`, `maintenance_status`, `run_maintenance`, `audit`;
- manifests: `manifests` by agent, optionally by session and message.
"""

from __future__ import annotations

from typing import Any

from memory_core.domain.cancellation import CancellationToken, Deadline, MonotonicReading
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.errors import NotFound
from memory_core.domain.validation import check_int
from memory_core.ports.tape import TapeInspectionReader
from memory_core.services.maintenance import Resolution
from memory_core.services.memory import MemoryService
from memory_plugins.routes.dtos import (
    AuditDTO,
    ClaimDTO,
    ClaimPage,
    ConflictDTO,
    DirectiveDTO,
    ManifestDTO,
    PersonaDTO,
    PersonaVersionDTO,
    SourceSpanDTO,
    route_converter,
)

__all__ = ["MemoryRoutes"]

# Most items one page or listing returns; a UI pages beyond it.
MAX_PAGE = 200
_TAPE_SECONDS = 5.0


class MemoryRoutes:
    def __init__(
        self,
        memory: MemoryService,
        *,
        tape: TapeInspectionReader | None,
        clock: MonotonicReading,
    ) -> None:
        self._memory = memory
        self._tape = tape
        self._clock = clock

    # --- claims ---------------------------------------------------------------------------
    def list_claims(
        self,
        agent_id: str,
        *,
        include_inactive: bool = False,
        limit: int = 50,
        after: str | None = None,
    ) -> ClaimPage:
        limit = check_int(limit, "limit", minimum=1, maximum=MAX_PAGE)
        claims = self._memory.list_claims(
            agent_id, include_inactive=include_inactive, limit=limit + 1, after_id=after
        )
        items = tuple(ClaimDTO.of(claim) for claim in claims[:limit])
        return ClaimPage(items=items, next_after=items[-1].id if len(claims) > limit else None)

    def get_claim(self, agent_id: str, claim_id: str) -> ClaimDTO:
        return ClaimDTO.of(self._memory.get_claim(agent_id, claim_id))

    async def search(self, agent_id: str, query: str, *, limit: int = 10) -> tuple[ClaimDTO, ...]:
        result = await self._memory.recall(
            agent_id, query, top_k=check_int(limit, "limit", minimum=1, maximum=MAX_PAGE)
        )
        return tuple(ClaimDTO.of(item.claim) for item in result.items)

    async def add_claim(self, agent_id: str, content: str) -> ClaimDTO | None:
        """The user's add: re-authorises forgotten text (R-WRITE-5). None when nothing new
        was stored (the text is already there)."""
        result = await self._memory.remember(agent_id, content, user_add=True)
        return None if result.claim is None else ClaimDTO.of(result.claim)

    async def update_claim(
        self, agent_id: str, claim_id: str, content: str, *, expected_revision: int | None = None
    ) -> ClaimDTO:
        """The user's edit: the same fact re-worded keeps its id, a different one becomes a
        new claim superseding this one (`manual_edit` lineage); the claim the edit left."""
        return ClaimDTO.of(
            await self._memory.update(
                agent_id, claim_id, content, expected_revision=expected_revision
            )
        )

    async def archive_claim(self, agent_id: str, claim_id: str) -> ClaimDTO:
        result = await self._memory.forget(agent_id, claim_id)
        assert result.claim is not None  # an archive returns the row it archived
        return ClaimDTO.of(result.claim)

    async def restore_claim(self, agent_id: str, claim_id: str) -> ClaimDTO:
        return ClaimDTO.of(await self._memory.restore(agent_id, claim_id))

    async def delete_claim(self, agent_id: str, claim_id: str) -> int:
        """Exact forgetting; the number of tombstones written."""
        return await self._memory.delete(agent_id, claim_id)

    async def claim_source(self, agent_id: str, claim_id: str) -> SourceSpanDTO | None:
        """The effective messages the claim was extracted from (edits applied), read
        through `TapeInspectionReader`; None for a claim without a source or a tape."""
        claim = self._memory.get_claim(agent_id, claim_id)
        source = claim.source
        if self._tape is None or source.session_id is None or not source.entry_ids:
            return None
        span = await self._tape.get_effective_message_source_span(
            source.session_id,
            source.entry_ids,
            deadline=Deadline.after(self._clock, _TAPE_SECONDS),
            cancel=CancellationToken(),
        )
        return None if span is None else SourceSpanDTO.of(claim.id, span)

    # --- conflicts and persona --------------------------------------------------------------
    def list_conflicts(self, agent_id: str, *, limit: int = 50) -> tuple[ConflictDTO, ...]:
        limit = check_int(limit, "limit", minimum=1, maximum=MAX_PAGE)
        return tuple(ConflictDTO.of(c) for c in self._memory.list_conflicts(agent_id, limit=limit))

    async def resolve_conflict(
        self, agent_id: str, challenger_id: str, resolution: Resolution | str
    ) -> ClaimDTO:
        return ClaimDTO.of(await self._memory.resolve_conflict(agent_id, challenger_id, resolution))

    def persona(self, agent_id: str) -> PersonaDTO:
        return PersonaDTO.of(self._memory.persona(agent_id))

    async def approve_persona(self, agent_id: str, draft_id: str) -> PersonaVersionDTO:
        version = PersonaVersionDTO.of(await self._memory.approve_persona(agent_id, draft_id))
        assert version is not None
        return version

    async def reject_persona(self, agent_id: str, draft_id: str) -> PersonaVersionDTO:
        version = PersonaVersionDTO.of(await self._memory.reject_persona(agent_id, draft_id))
        assert version is not None
        return version

    async def rollback_persona(self, agent_id: str) -> PersonaVersionDTO:
        version = PersonaVersionDTO.of(await self._memory.rollback_persona(agent_id))
        assert version is not None
        return version

    # --- directives ---------------------------------------------------------------------------
    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | str | None = None
    ) -> tuple[DirectiveDTO, ...]:
        chosen = None if status is None else DirectiveStatus(status)
        return tuple(
            DirectiveDTO.of(d) for d in self._memory.list_directives(agent_id, status=chosen)
        )

    def create_directive(
        self, agent_id: str, kind: DirectiveKind | str, content: str, *, topic: str | None = None
    ) -> DirectiveDTO:
        return DirectiveDTO.of(
            self._memory.create_directive(agent_id, kind, content, topic=topic)  # type: ignore[arg-type]
        )

    def approve_directive(self, agent_id: str, directive_id: str) -> DirectiveDTO:
        return DirectiveDTO.of(self._memory.approve_directive(agent_id, directive_id))

    def reject_directive(self, agent_id: str, directive_id: str) -> DirectiveDTO:
        return DirectiveDTO.of(self._memory.reject_directive(agent_id, directive_id))

    # --- upkeep and manifests -------------------------------------------------------------
    async def health(self, agent_id: str | None = None) -> dict[str, Any]:
        """The diagnostics report as JSON-ready data (provider probes name types, never
        messages, keys or URLs)."""
        report = await self._memory.diagnose([] if agent_id is None else [agent_id])
        return {"healthy": report.healthy, **route_converter.unstructure(report)}

    def maintenance_status(self, agent_id: str) -> dict[str, Any]:
        status = self._memory.maintenance_status()
        audit = self._memory.audit_events(agent_id, limit=50)
        passes = [
            AuditDTO.of(e)
            for e in audit
            if e.event in ("memory/maintenance", "memory/maintenance_llm")
        ]
        return {
            "running": status.running,
            "in_flight": agent_id in status.in_flight,
            "armed": agent_id in status.armed,
            "dirty_seeds": self._memory.dirty_seeds(agent_id),
            "last_passes": [route_converter.unstructure(p) for p in passes[:5]],
        }

    async def run_maintenance(self, agent_id: str, *, heavy: bool | None = None) -> dict[str, Any]:
        report = await self._memory.run_maintenance(agent_id, heavy=heavy)
        return route_converter.unstructure(report)  # type: ignore[no-any-return]

    def audit(self, agent_id: str, *, limit: int = 50) -> tuple[AuditDTO, ...]:
        limit = check_int(limit, "limit", minimum=1, maximum=MAX_PAGE)
        return tuple(AuditDTO.of(e) for e in self._memory.audit_events(agent_id, limit=limit))

    async def manifests(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        message_id: str | None = None,
        limit: int = 50,
    ) -> tuple[ManifestDTO, ...]:
        if self._tape is None:
            raise NotFound("no tape is configured for view manifests")
        records = await self._tape.list_memory_view_manifests_by_agent(
            agent_id,
            session_id=session_id,
            message_id=message_id,
            limit=check_int(limit, "limit", minimum=1, maximum=MAX_PAGE),
            deadline=Deadline.after(self._clock, _TAPE_SECONDS),
            cancel=CancellationToken(),
        )
        return tuple(ManifestDTO.of(record) for record in records)
