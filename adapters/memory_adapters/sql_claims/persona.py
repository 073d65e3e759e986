"""Persona rows: the agent's self-model as `kind = 'persona'` rows whose `persona_state`
says which one the turn reads (reference §8.6). `PersonaMethods` is the `Personas` role the
`SqlClaimStore` inherits. Persona rows are internal — never listed, searched, embedded or
tombstoned — and a clear or a retirement removes them with the claims. Only the user's
`approve_persona` and `rollback_persona` ever make a version active."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime

import attrs

from memory_adapters.sql_claims import audit
from memory_adapters.sql_claims.claims import ensure_not_fenced
from memory_adapters.sql_claims.rows import CLAIM_COLUMNS, ClaimRow
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import ClaimDraft, ClaimKind
from memory_core.domain.errors import NotFound
from memory_core.domain.scope import Scope
from memory_core.ports.claims import PersonaState, PersonaVersion, PersonaView
from memory_core.ports.secrets import SecretPolicy
from memory_core.storage.drafts import prepare
from memory_core.storage.persona import change_ratio, needs_review, sanitise_persona

__all__ = ["PersonaMethods"]

_INSERT = (
    f"INSERT INTO agent_memory ({', '.join(CLAIM_COLUMNS)}, persona_state)"
    f" VALUES ({', '.join('?' for _ in CLAIM_COLUMNS)}, ?)"
)


def _version(session: Session, agent_id: str, state: PersonaState) -> PersonaVersion | None:
    row = session.one(
        """SELECT id, content, created_at, updated_at FROM agent_memory
           WHERE agent_id = ? AND kind = 'persona' AND persona_state = ?
           ORDER BY created_at DESC, id DESC LIMIT 1""",
        (agent_id, state.value),
    )
    if row is None:
        return None
    claim_id, content, created, updated = row
    return PersonaVersion(
        id=str(claim_id),
        content=str(content),
        state=state,
        created_at=session.instant(created),
        updated_at=session.instant(updated),
    )


def _view(session: Session, agent_id: str) -> PersonaView:
    if session.one("SELECT 1 FROM agent_memory_clear_job WHERE agent_id = ?", (agent_id,)):
        return PersonaView(active=None, draft=None, change_ratio=None, needs_review=False)
    active = _version(session, agent_id, PersonaState.ACTIVE)
    draft = _version(session, agent_id, PersonaState.DRAFT)
    ratio = None
    if draft is not None:
        ratio = change_ratio(active.content if active else "", draft.content)
    return PersonaView(
        active=active,
        draft=draft,
        change_ratio=ratio,
        needs_review=ratio is not None and needs_review(ratio, has_previous=active is not None),
    )


def _move(
    session: Session, agent_id: str, claim_id: str, state: PersonaState, now: datetime
) -> None:
    session.execute(
        """UPDATE agent_memory SET persona_state = ?, revision = revision + 1, updated_at = ?
           WHERE agent_id = ? AND id = ?""",
        (state.value, now, agent_id, claim_id),
    )


class PersonaMethods:
    """The `Personas` role over the concrete store's transactions."""

    _write: Callable[..., AbstractContextManager[Session]]
    _read: Callable[[], AbstractContextManager[Session]]
    _now: Callable[..., datetime]
    _policy: SecretPolicy
    _claim_id: Callable[[], str]

    def persona(self, agent_id: str) -> PersonaView:
        with self._read() as session:
            return _view(session, agent_id)

    def draft_persona(self, agent_id: str, content: str, *, now: datetime) -> PersonaVersion | None:
        text = sanitise_persona(content)
        prepared = prepare(
            ClaimDraft(
                agent_id=agent_id,
                kind=ClaimKind.PERSONA,
                content=text or content,
                importance=1.0,
                scope=Scope.agent(),
            ),
            self._policy,
        )
        now = self._now(now)
        with self._write(agent_id) as session:
            ensure_not_fenced(session, agent_id)
            view = _view(session, agent_id)
            if view.draft is not None:
                return None
            if view.active is not None and view.active.content == prepared.content:
                return None
            claim_id = self._claim_id()
            # Each version has its own key: a text may come back after it was replaced.
            row = attrs.evolve(
                ClaimRow.from_prepared(prepared, claim_id=claim_id, now=now),
                provenance_key=f"persona:{claim_id}",
            )
            session.execute(_INSERT, (*attrs.astuple(row, recurse=False), PersonaState.DRAFT.value))
            audit.record(
                session,
                agent_id=agent_id,
                event="persona/evolve",
                actor="scheduler",
                now=now,
                memory_id=claim_id,
                refs={"state": PersonaState.DRAFT.value},
            )
            return _version(session, agent_id, PersonaState.DRAFT)

    def approve_persona(self, agent_id: str, draft_id: str, *, now: datetime) -> PersonaVersion:
        now = self._now(now)
        with self._write(agent_id) as session:
            draft, active = self._pending(session, agent_id, draft_id)
            if active is not None:
                _move(session, agent_id, active.id, PersonaState.RETIRED, now)
            _move(session, agent_id, draft.id, PersonaState.ACTIVE, now)
            audit.record(
                session,
                agent_id=agent_id,
                event="persona/approve",
                actor="user",
                now=now,
                memory_id=draft.id,
                refs={"retired": None if active is None else active.id},
            )
            version = _version(session, agent_id, PersonaState.ACTIVE)
            assert version is not None
            return version

    def reject_persona(self, agent_id: str, draft_id: str, *, now: datetime) -> PersonaVersion:
        now = self._now(now)
        with self._write(agent_id) as session:
            draft, _ = self._pending(session, agent_id, draft_id)
            _move(session, agent_id, draft.id, PersonaState.REJECTED, now)
            audit.record(
                session,
                agent_id=agent_id,
                event="persona/reject",
                actor="user",
                now=now,
                memory_id=draft.id,
            )
            return attrs.evolve(draft, state=PersonaState.REJECTED, updated_at=now)

    def rollback_persona(self, agent_id: str, *, now: datetime) -> PersonaVersion:
        now = self._now(now)
        with self._write(agent_id) as session:
            ensure_not_fenced(session, agent_id)
            active = _version(session, agent_id, PersonaState.ACTIVE)
            previous = _version(session, agent_id, PersonaState.RETIRED)
            if active is None or previous is None:
                raise NotFound("no earlier persona version to roll back to for this agent")
            # Rejected, not retired: a second rollback goes further back, never back here.
            _move(session, agent_id, active.id, PersonaState.REJECTED, now)
            _move(session, agent_id, previous.id, PersonaState.ACTIVE, now)
            audit.record(
                session,
                agent_id=agent_id,
                event="persona/rollback",
                actor="user",
                now=now,
                memory_id=previous.id,
                refs={"rejected": active.id},
            )
            version = _version(session, agent_id, PersonaState.ACTIVE)
            assert version is not None
            return version

    @staticmethod
    def _pending(
        session: Session, agent_id: str, draft_id: str
    ) -> tuple[PersonaVersion, PersonaVersion | None]:
        ensure_not_fenced(session, agent_id)
        view = _view(session, agent_id)
        if view.draft is None or view.draft.id != draft_id:
            raise NotFound(f"no pending persona draft {draft_id} for this agent")
        return view.draft, view.active
