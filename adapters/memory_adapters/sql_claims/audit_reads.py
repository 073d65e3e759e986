"""Reading the audit trail back for a claim's history (`AuditReader`)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory_adapters.sql_claims.session import Session
from memory_core.ports.claims.audit import AuditEvent

__all__ = ["list_audit"]


def list_audit(
    session: Session, agent_id: str, memory_ids: Sequence[str], limit: int
) -> list[AuditEvent]:
    if not memory_ids:
        return []
    column = session.dialect.audit_refs_column
    rows = session.execute(
        f"""SELECT event_type, actor_type, memory_ref_id, {column}, status, created_at
            FROM agent_memory_audit
            WHERE agent_id = ? AND {session.dialect.id_list("memory_ref_id")}
            ORDER BY created_at DESC, id DESC
            LIMIT ?""",
        (agent_id, list(memory_ids), limit),
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
        for event, actor, memory_id, refs, status, created in reversed(rows)
    ]
