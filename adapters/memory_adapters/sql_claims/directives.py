"""The directive table: the trust plane (R-DIR-1..3). Only an explicit create or an approve
makes a directive active; suggestions are drafts inserted only if their identity is new, so
a rejected suggestion stays rejected however often it is suggested again. Every function
runs inside the caller's write transaction, so the capacity check and the activation cannot
race. Normalisation (by the caller, before the lock), capacity and transitions are the
rules of `memory_core.storage.directives`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs

from memory_adapters.sql_claims import audit
from memory_adapters.sql_claims.queries import later_of
from memory_adapters.sql_claims.rows import DIRECTIVE_COLUMNS, DirectiveRow
from memory_adapters.sql_claims.session import Session
from memory_core.domain.directives import Directive, DirectiveSource, DirectiveStatus
from memory_core.domain.errors import NotFound
from memory_core.storage.directives import (
    NormalisedDirective,
    check_capacity,
    check_transition,
    create_needs_capacity,
    transition_event,
)

__all__ = ["create", "list_directives", "set_status", "suggest"]

_SELECT = ", ".join(DIRECTIVE_COLUMNS)
_INSERT = (
    f"INSERT INTO agent_memory_directive ({_SELECT})"
    f" VALUES ({', '.join('?' for _ in DIRECTIVE_COLUMNS)})"
)


def _one(session: Session, where: str, params: tuple[object, ...]) -> DirectiveRow | None:
    row = session.one(f"SELECT {_SELECT} FROM agent_memory_directive WHERE {where}", params)
    return None if row is None else session.dialect.row_reader.directive_row(row)


def _by_id(session: Session, agent_id: str, directive_id: str) -> Directive:
    row = _one(session, "agent_id = ? AND id = ?", (agent_id, directive_id))
    if row is None:
        raise NotFound(f"no directive {directive_id} for this agent")
    return row.to_directive()


def _ensure_capacity(session: Session, agent_id: str) -> None:
    row = session.one(
        "SELECT count(*) FROM agent_memory_directive WHERE agent_id = ? AND status = 'active'",
        (agent_id,),
    )
    check_capacity(0 if row is None else int(row[0]))


def _new_row(
    agent_id: str,
    made: NormalisedDirective,
    *,
    status: DirectiveStatus,
    source: DirectiveSource,
    directive_id: str,
    now: datetime,
) -> DirectiveRow:
    return DirectiveRow(
        agent_id=agent_id,
        id=directive_id,
        kind=made.kind.value,
        status=status.value,
        source=source.value,
        content=made.content,
        normalized_topic=made.topic,
        identity_hash=made.identity,
        created_at=now,
        updated_at=now,
    )


def create(
    session: Session,
    agent_id: str,
    made: NormalisedDirective,
    *,
    now: datetime,
    new_id: Callable[[], str],
) -> Directive:
    """Explicit user create: upsert by identity, active at once (R-DIR-1)."""
    existing = _one(
        session,
        "agent_id = ? AND kind = ? AND identity_hash = ?",
        (agent_id, made.kind.value, made.identity),
    )
    if create_needs_capacity(None if existing is None else existing.status):
        _ensure_capacity(session, agent_id)
    if existing is None:
        row = _new_row(
            agent_id,
            made,
            status=DirectiveStatus.ACTIVE,
            source=DirectiveSource.EXPLICIT_USER,
            directive_id=new_id(),
            now=now,
        )
        session.execute(_INSERT, attrs.astuple(row))
        directive_id = row.id
    else:
        directive_id = existing.id
        session.execute(
            f"""UPDATE agent_memory_directive
                 SET status = 'active', source = ?, content = ?, normalized_topic = ?,
                     updated_at = {later_of("created_at")}
               WHERE agent_id = ? AND id = ?""",
            (
                DirectiveSource.EXPLICIT_USER.value,
                made.content,
                made.topic,
                now,
                now,
                agent_id,
                directive_id,
            ),
        )
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/directive_create",
        actor="user",
        now=now,
        memory_id=directive_id,
    )
    return _by_id(session, agent_id, directive_id)


def suggest(
    session: Session,
    agent_id: str,
    made: NormalisedDirective,
    *,
    now: datetime,
    new_id: Callable[[], str],
) -> Directive | None:
    """A derived draft, inserted only if absent; None when the identity already exists."""
    row = _new_row(
        agent_id,
        made,
        status=DirectiveStatus.DRAFT,
        source=DirectiveSource.DERIVED_SUGGESTION,
        directive_id=new_id(),
        now=now,
    )
    if session.changed(_INSERT + " ON CONFLICT DO NOTHING", attrs.astuple(row)) == 0:
        return None
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/directive_suggest",
        actor="runtime",
        now=now,
        memory_id=row.id,
    )
    return row.to_directive()


def set_status(
    session: Session,
    agent_id: str,
    directive_id: str,
    status: DirectiveStatus,
    *,
    now: datetime,
) -> Directive:
    """draft→active (approve, capacity-checked) or draft→rejected; nothing else."""
    status = DirectiveStatus(status)
    current = _by_id(session, agent_id, directive_id)
    if check_transition(current.status, status):
        _ensure_capacity(session, agent_id)
    session.execute(
        f"""UPDATE agent_memory_directive
              SET status = ?, updated_at = {later_of("created_at")}
            WHERE agent_id = ? AND id = ?""",
        (status.value, now, now, agent_id, directive_id),
    )
    audit.record(
        session,
        agent_id=agent_id,
        event=transition_event(status),
        actor="user",
        now=now,
        memory_id=directive_id,
    )
    return _by_id(session, agent_id, directive_id)


def list_directives(
    session: Session, agent_id: str, *, status: DirectiveStatus | None
) -> list[Directive]:
    where, params = "agent_id = ?", [agent_id]
    if status is not None:
        where += " AND status = ?"
        params.append(DirectiveStatus(status).value)
    rows = session.execute(
        f"SELECT {_SELECT} FROM agent_memory_directive WHERE {where}"
        " ORDER BY updated_at DESC, id ASC",
        params,
    )
    reader = session.dialect.row_reader
    return [reader.directive_row(row).to_directive() for row in rows]
