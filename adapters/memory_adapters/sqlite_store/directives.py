"""The directive table: the trust plane (R-DIR-1..3). Only an explicit create or an approve
makes a directive active; suggestions are drafts inserted only if their identity is new,
so a rejected suggestion stays rejected however often it is suggested again."""

from __future__ import annotations

from collections.abc import Callable

import apsw

from memory_adapters.sqlite_store import audit
from memory_adapters.sqlite_store.rows import (
    DIRECTIVE_COLUMNS,
    DirectiveRow,
    row_converter,
    structure_row,
)
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
    f" VALUES ({', '.join(':' + name for name in DIRECTIVE_COLUMNS)})"
)


def _normalise(
    kind: DirectiveKind, content: str, topic: str | None, policy: SecretPolicy
) -> tuple[str, str | None, str]:
    """(content, normalised topic, identity hash); refuses over-broad topics (R-DIR-2)."""
    kind = DirectiveKind(kind)
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


def _by_identity(
    conn: apsw.Connection, agent_id: str, kind: DirectiveKind, identity: str
) -> DirectiveRow | None:
    row = conn.execute(
        f"SELECT {_SELECT} FROM agent_memory_directive"
        " WHERE agent_id = ? AND kind = ? AND identity_hash = ?",
        (agent_id, kind.value, identity),
    ).fetchone()
    return None if row is None else structure_row(row, DirectiveRow)


def _by_id(conn: apsw.Connection, agent_id: str, directive_id: str) -> DirectiveRow | None:
    row = conn.execute(
        f"SELECT {_SELECT} FROM agent_memory_directive WHERE agent_id = ? AND id = ?",
        (agent_id, directive_id),
    ).fetchone()
    return None if row is None else structure_row(row, DirectiveRow)


def _ensure_capacity(conn: apsw.Connection, agent_id: str) -> None:
    (active,) = conn.execute(
        "SELECT count(*) FROM agent_memory_directive WHERE agent_id = ? AND status = 'active'",
        (agent_id,),
    ).fetchone()
    if active >= MAX_ACTIVE_DIRECTIVES:
        raise DirectiveCapacityExceeded(MAX_ACTIVE_DIRECTIVES)


def create(
    conn: apsw.Connection,
    agent_id: str,
    kind: DirectiveKind,
    content: str,
    *,
    topic: str | None,
    policy: SecretPolicy,
    now_ms: int,
    new_id: Callable[[], str],
) -> Directive:
    """Explicit user create: upsert by identity, active at once (R-DIR-1)."""
    kind = DirectiveKind(kind)
    cleaned, normalised_topic, identity = _normalise(kind, content, topic, policy)
    existing = _by_identity(conn, agent_id, kind, identity)
    if existing is None or existing.status != DirectiveStatus.ACTIVE.value:
        _ensure_capacity(conn, agent_id)
    if existing is None:
        row = DirectiveRow(
            agent_id=agent_id,
            id=new_id(),
            kind=kind.value,
            status="active",
            source=DirectiveSource.EXPLICIT_USER.value,
            content=cleaned,
            normalized_topic=normalised_topic,
            identity_hash=identity,
            created_at=now_ms,
            updated_at=now_ms,
        )
        conn.execute(_INSERT, row_converter.unstructure(row))
        directive_id = row.id
    else:
        directive_id = existing.id
        conn.execute(
            """UPDATE agent_memory_directive
                 SET status = 'active', source = ?, content = ?, normalized_topic = ?,
                     updated_at = max(created_at, ?)
               WHERE agent_id = ? AND id = ?""",
            (
                DirectiveSource.EXPLICIT_USER.value,
                cleaned,
                normalised_topic,
                now_ms,
                agent_id,
                directive_id,
            ),
        )
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/directive_create",
        actor="user",
        now_ms=now_ms,
        memory_id=directive_id,
    )
    fresh = _by_id(conn, agent_id, directive_id)
    assert fresh is not None
    return fresh.to_directive()


def suggest(
    conn: apsw.Connection,
    agent_id: str,
    kind: DirectiveKind,
    content: str,
    *,
    topic: str | None,
    policy: SecretPolicy,
    now_ms: int,
    new_id: Callable[[], str],
) -> Directive | None:
    """A derived draft, inserted only if absent; None when the identity already exists."""
    kind = DirectiveKind(kind)
    cleaned, normalised_topic, identity = _normalise(kind, content, topic, policy)
    row = DirectiveRow(
        agent_id=agent_id,
        id=new_id(),
        kind=kind.value,
        status="draft",
        source=DirectiveSource.DERIVED_SUGGESTION.value,
        content=cleaned,
        normalized_topic=normalised_topic,
        identity_hash=identity,
        created_at=now_ms,
        updated_at=now_ms,
    )
    conn.execute(_INSERT + " ON CONFLICT DO NOTHING", row_converter.unstructure(row))
    if conn.changes() == 0:
        return None
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/directive_suggest",
        actor="runtime",
        now_ms=now_ms,
        memory_id=row.id,
    )
    return row.to_directive()


def set_status(
    conn: apsw.Connection,
    agent_id: str,
    directive_id: str,
    status: DirectiveStatus,
    *,
    now_ms: int,
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
        """UPDATE agent_memory_directive SET status = ?, updated_at = max(created_at, ?)
           WHERE agent_id = ? AND id = ?""",
        (status.value, now_ms, agent_id, directive_id),
    )
    event = "approve" if status is DirectiveStatus.ACTIVE else "reject"
    audit.record(
        conn,
        agent_id=agent_id,
        event=f"memory/directive_{event}",
        actor="user",
        now_ms=now_ms,
        memory_id=directive_id,
    )
    fresh = _by_id(conn, agent_id, directive_id)
    assert fresh is not None
    return fresh.to_directive()


def list_directives(
    conn: apsw.Connection, agent_id: str, *, status: DirectiveStatus | None
) -> list[Directive]:
    where, params = "agent_id = ?", [agent_id]
    if status is not None:
        where += " AND status = ?"
        params.append(DirectiveStatus(status).value)
    rows = conn.execute(
        f"SELECT {_SELECT} FROM agent_memory_directive WHERE {where}"
        " ORDER BY updated_at DESC, id ASC",
        params,
    )
    return [structure_row(row, DirectiveRow).to_directive() for row in rows]
