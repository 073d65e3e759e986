"""Reading the audit trail back (`AuditReader`): a claim's history, an agent's trail."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory_adapters.sql_claims.session import Session
from memory_core.ports.claims.audit import AuditEvent

__all__ = ["list_audit"]


def list_audit(
    session: Session, agent_id: str, memory_ids: Sequence[str] | None, limit: int
) -> list[AuditEvent]:
    """Newest first; `memory_ids` None means every event of the agent."""
    if memory_ids is not None and not memory_ids:
        return []
    column = session.dialect.audit_refs_column
    about = "" if memory_ids is None else f"AND {session.dialect.id_list('memory_ref_id')}"
    params: tuple[object, ...] = (agent_id,) if memory_ids is None else (agent_id, list(memory_ids))
    rows = session.execute(
        f"""SELECT event_type, actor_type, memory_ref_id, {column}, status, created_at
            FROM agent_memory_audit
            WHERE agent_id = ? {about}
            ORDER BY created_at DESC, id DESC
            LIMIT ?""",
        (*params, limit),
    ).fetchall()
    return [
        AuditEvent(
            event=event,
            actor=actor,
            memory_id=memory_id,
            # SQLite keeps the refs as JSON text, PostgreSQL as jsonb (a dict already).
            refs=refs if isinstance(refs, dict) else json.loads(refs or "{}"),
            status=status,
            created_at=session.instant(created),
        )
        for event, actor, memory_id, refs, status, created in rows
    ]
