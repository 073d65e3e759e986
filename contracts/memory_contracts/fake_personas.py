"""`FakePersonas`: the `Personas` role in memory (reference §8.6). Versions live beside
the claim rows, as the SQL stores' persona rows live beside claims: never listed, searched
or embedded; a clear or a retirement drops them with the owner's other tables."""

from __future__ import annotations

from datetime import datetime

import attrs

from memory_contracts.fake_claim_table import ClaimTable, FakeStoreBase
from memory_core.domain.errors import ClearInProgress, NotFound
from memory_core.ports.claims import PersonaState, PersonaVersion, PersonaView
from memory_core.storage.drafts import stored_time
from memory_core.storage.persona import change_ratio, needs_review, sanitise_persona

__all__ = ["FakePersonas"]


def _latest(table: ClaimTable, agent_id: str, state: PersonaState) -> PersonaVersion | None:
    found = [
        v for (owner, _), v in table.personas.items() if owner == agent_id and v.state is state
    ]
    return max(found, key=lambda v: (v.created_at, v.id), default=None)


def _view(table: ClaimTable, agent_id: str) -> PersonaView:
    if agent_id in table.jobs:
        return PersonaView(active=None, draft=None, change_ratio=None, needs_review=False)
    active = _latest(table, agent_id, PersonaState.ACTIVE)
    draft = _latest(table, agent_id, PersonaState.DRAFT)
    ratio = None if draft is None else change_ratio(active.content if active else "", draft.content)
    return PersonaView(
        active=active,
        draft=draft,
        change_ratio=ratio,
        needs_review=ratio is not None and needs_review(ratio, has_previous=active is not None),
    )


class FakePersonas(FakeStoreBase):
    def persona(self, agent_id: str) -> PersonaView:
        return _view(self._open(), agent_id)

    def draft_persona(self, agent_id: str, content: str, *, now: datetime) -> PersonaVersion | None:
        at = stored_time(now, "now")
        text = self._policy.check_write(sanitise_persona(content) or content, field="content")
        table = self._open()
        if agent_id in table.jobs:
            raise ClearInProgress("a clear job is pending for this agent")
        view = _view(table, agent_id)
        if view.draft is not None or (view.active is not None and view.active.content == text):
            return None
        version = PersonaVersion(
            id=self._new_id("mem"),
            content=text,
            state=PersonaState.DRAFT,
            created_at=at,
            updated_at=at,
        )
        table.personas[(agent_id, version.id)] = version
        return version

    def approve_persona(self, agent_id: str, draft_id: str, *, now: datetime) -> PersonaVersion:
        at = stored_time(now, "now")
        table = self._open()
        draft, active = self._pending(table, agent_id, draft_id)
        if active is not None:
            table.personas[(agent_id, active.id)] = attrs.evolve(
                active, state=PersonaState.RETIRED, updated_at=at
            )
        approved = attrs.evolve(draft, state=PersonaState.ACTIVE, updated_at=at)
        table.personas[(agent_id, draft.id)] = approved
        return approved

    def reject_persona(self, agent_id: str, draft_id: str, *, now: datetime) -> PersonaVersion:
        at = stored_time(now, "now")
        table = self._open()
        draft, _ = self._pending(table, agent_id, draft_id)
        rejected = attrs.evolve(draft, state=PersonaState.REJECTED, updated_at=at)
        table.personas[(agent_id, draft.id)] = rejected
        return rejected

    def rollback_persona(self, agent_id: str, *, now: datetime) -> PersonaVersion:
        at = stored_time(now, "now")
        table = self._open()
        if agent_id in table.jobs:
            raise ClearInProgress("a clear job is pending for this agent")
        active = _latest(table, agent_id, PersonaState.ACTIVE)
        previous = _latest(table, agent_id, PersonaState.RETIRED)
        if active is None or previous is None:
            raise NotFound("no earlier persona version to roll back to for this agent")
        table.personas[(agent_id, active.id)] = attrs.evolve(
            active, state=PersonaState.REJECTED, updated_at=at
        )
        restored = attrs.evolve(previous, state=PersonaState.ACTIVE, updated_at=at)
        table.personas[(agent_id, previous.id)] = restored
        return restored

    @staticmethod
    def _pending(
        table: ClaimTable, agent_id: str, draft_id: str
    ) -> tuple[PersonaVersion, PersonaVersion | None]:
        if agent_id in table.jobs:
            raise ClearInProgress("a clear job is pending for this agent")
        view = _view(table, agent_id)
        if view.draft is None or view.draft.id != draft_id:
            raise NotFound(f"no pending persona draft {draft_id} for this agent")
        return view.draft, view.active
