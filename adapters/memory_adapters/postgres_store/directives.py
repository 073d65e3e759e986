"""The directive table: the trust plane (R-DIR-1..3). Only an explicit create or an approve
makes a directive active; suggestions are drafts inserted only if their identity is new,
so a rejected suggestion stays rejected however often it is suggested again. Every function
runs inside the caller's write transaction, which holds the owner's advisory lock, so the
capacity check and the activation cannot race."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs
import psycopg

from memory_adapters.postgres_store import audit
from memory_adapters.postgres_store.rows import DIRECTIVE_COLUMNS, DirectiveRow, structure_row
from memory_core.domain.directives import (
    MAX_ACTIVE_DIRECTIVES,
    MAX_DIRECTIVE_CONTENT,
    MAX_TOPIC_LENGTH,
    Directive,
    DirectiveKind,
    DirectiveSource,
    DirectiveStatus,
    clean_directive_text,
    directive_identity_hash,
    is_topic_specific,
    match_text,
)
from memory_core.domain.errors import DirectiveCapacityExceeded, NotFound, ValidationError
from memory_core.ports.secrets import SecretPolicy

__all__ = ["create", "list_directives", "set_status", "suggest"]

_SELECT = ", ".join(DIRECTIVE_COLUMNS)
_INSERT = (
    f"INSERT INTO agent_memory_directive ({_SELECT})"
    f" VALUES ({', '.join('%s' for _ in DIRECTIVE_COLUMNS)})"
)


def _normalise(
    kind: DirectiveKind, content: str, topic: str | None, policy: SecretPolicy
) -> tuple[str, str | None, str]:
    """(content, normalised topic, identity hash); refuses over-broad topics (R-DIR-2)."""
    cleaned = clean_directive_text(content, field="content", limit=MAX_DIRECTIVE_CONTENT)
    cleaned = policy.check_write(cleaned, field="content")
    normalised_topic: str | None = None
    if kind is DirectiveKind.SUPPRESS_TOPIC:
        if topic is None:
            raise ValidationError("topic", "required for suppress_topic")
        raw = clean_directive_text(topic, field="topic", limit=MAX_TOPIC_LENGTH)
        raw = policy.check_write(raw, field="topic")
        if not is_topic_specific(raw):
            raise ValidationError("topic", "too broad to suppress on")
        normalised_topic = match_text(raw)
        if len(normalised_topic) > MAX_TOPIC_LENGTH:  # NFKC can lengthen text
            raise ValidationError("topic", f"longer than {MAX_TOPIC_LENGTH} code points")
    elif topic is not None:
        raise ValidationError("topic", "only suppress_topic directives have a topic")
    return cleaned, normalised_topic, directive_identity_hash(kind, cleaned, normalised_topic)


def _one(conn: psycopg.Connection, where: str, params: tuple[object, ...]) -> DirectiveRow | None:
    row = conn.execute(
        f"SELECT {_SELECT} FROM agent_memory_directive WHERE {where}", params
    ).fetchone()
    return None if row is None else structure_row(row, DirectiveRow)


def _by_id(conn: psycopg.Connection, agent_id: str, directive_id: str) -> DirectiveRow | None:
    return _one(conn, "agent_id = %s AND id = %s", (agent_id, directive_id))


def _ensure_capacity(conn: psycopg.Connection, agent_id: str) -> None:
    row = conn.execute(
        "SELECT count(*) FROM agent_memory_directive WHERE agent_id = %s AND status = 'active'",
        (agent_id,),
    ).fetchone()
    if row is not None and row[0] >= MAX_ACTIVE_DIRECTIVES:
        raise DirectiveCapacityExceeded(MAX_ACTIVE_DIRECTIVES)


def create(
    conn: psycopg.Connection,
    agent_id: str,
    kind: DirectiveKind,
    content: str,
    *,
    topic: str | None,
    policy: SecretPolicy,
    now: datetime,
    new_id: Callable[[], str],
) -> Directive:
    """Explicit user create: upsert by identity, active at once (R-DIR-1)."""
    kind = DirectiveKind(kind)
    cleaned, normalised_topic, identity = _normalise(kind, content, topic, policy)
    existing = _one(
        conn,
        "agent_id = %s AND kind = %s AND identity_hash = %s",
        (agent_id, kind.value, identity),
    )
    if existing is None or existing.status != DirectiveStatus.ACTIVE.value:
        _ensure_capacity(conn, agent_id)
    if existing is None:
        row = DirectiveRow(
            agent_id=agent_id,
            id=new_id(),
            kind=kind.value,
            status=DirectiveStatus.ACTIVE.value,
            source=DirectiveSource.EXPLICIT_USER.value,
            content=cleaned,
            normalized_topic=normalised_topic,
            identity_hash=identity,
            created_at=now,
            updated_at=now,
        )
        conn.execute(_INSERT, attrs.astuple(row))
        directive_id = row.id
    else:
        directive_id = existing.id
        conn.execute(
            """UPDATE agent_memory_directive
                 SET status = 'active', source = %s, content = %s, normalized_topic = %s,
                     updated_at = greatest(created_at, %s)
               WHERE agent_id = %s AND id = %s""",
            (
                DirectiveSource.EXPLICIT_USER.value,
                cleaned,
                normalised_topic,
                now,
                agent_id,
                directive_id,
            ),
        )
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/directive_create",
        actor="user",
        now=now,
        memory_id=directive_id,
    )
    fresh = _by_id(conn, agent_id, directive_id)
    assert fresh is not None
    return fresh.to_directive()


def suggest(
    conn: psycopg.Connection,
    agent_id: str,
    kind: DirectiveKind,
    content: str,
    *,
    topic: str | None,
    policy: SecretPolicy,
    now: datetime,
    new_id: Callable[[], str],
) -> Directive | None:
    """A derived draft, inserted only if absent; None when the identity already exists."""
    kind = DirectiveKind(kind)
    cleaned, normalised_topic, identity = _normalise(kind, content, topic, policy)
    row = DirectiveRow(
        agent_id=agent_id,
        id=new_id(),
        kind=kind.value,
        status=DirectiveStatus.DRAFT.value,
        source=DirectiveSource.DERIVED_SUGGESTION.value,
        content=cleaned,
        normalized_topic=normalised_topic,
        identity_hash=identity,
        created_at=now,
        updated_at=now,
    )
    if conn.execute(_INSERT + " ON CONFLICT DO NOTHING", attrs.astuple(row)).rowcount == 0:
        return None
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/directive_suggest",
        actor="runtime",
        now=now,
        memory_id=row.id,
    )
    return row.to_directive()


def set_status(
    conn: psycopg.Connection,
    agent_id: str,
    directive_id: str,
    status: DirectiveStatus,
    *,
    now: datetime,
) -> Directive:
    """draft→active (approve, capacity-checked) or draft→rejected; nothing else."""
    status = DirectiveStatus(status)
    row = _by_id(conn, agent_id, directive_id)
    if row is None:
        raise NotFound(f"no directive {directive_id} for this agent")
    if status is DirectiveStatus.DRAFT or row.status != DirectiveStatus.DRAFT.value:
        raise ValidationError("status", f"cannot move a {row.status} directive to {status.value}")
    if status is DirectiveStatus.ACTIVE:
        _ensure_capacity(conn, agent_id)
    conn.execute(
        """UPDATE agent_memory_directive SET status = %s, updated_at = greatest(created_at, %s)
           WHERE agent_id = %s AND id = %s""",
        (status.value, now, agent_id, directive_id),
    )
    event = "approve" if status is DirectiveStatus.ACTIVE else "reject"
    audit.record(
        conn,
        agent_id=agent_id,
        event=f"memory/directive_{event}",
        actor="user",
        now=now,
        memory_id=directive_id,
    )
    fresh = _by_id(conn, agent_id, directive_id)
    assert fresh is not None
    return fresh.to_directive()


def list_directives(
    conn: psycopg.Connection, agent_id: str, *, status: DirectiveStatus | None
) -> list[Directive]:
    where, params = "agent_id = %s", [agent_id]
    if status is not None:
        where += " AND status = %s"
        params.append(DirectiveStatus(status).value)
    rows = conn.execute(
        f"SELECT {_SELECT} FROM agent_memory_directive WHERE {where}"
        " ORDER BY updated_at DESC, id ASC",
        params,
    )
    return [structure_row(row, DirectiveRow).to_directive() for row in rows]
