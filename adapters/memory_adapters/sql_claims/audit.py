"""The audit trail: ids, counts and closed enums only — never content (R-ARCH-6).

Events are written inside the transaction of the mutation they describe. Retention prunes
operational events only; it never touches lineage, which lives in its own table.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from memory_adapters.sql_claims.session import Session

__all__ = ["OPERATIONAL_EVENTS", "prune", "record"]

# Housekeeping events retention may drop; user-visible events (add, delete, archive,
# restore, manual_edit, directives, clear) are kept.
OPERATIONAL_EVENTS = ("memory/repair", "memory/clear_batch")


def record(
    session: Session,
    *,
    agent_id: str,
    event: str,
    actor: str,
    now: datetime,
    memory_id: str | None = None,
    refs: Mapping[str, int | str | bool | None] | None = None,
    status: str = "completed",
) -> None:
    """Append one event. `refs` values are ids, counts and enums by construction: callers
    pass nothing else, and the type says so."""
    column = session.dialect.audit_refs_column
    session.execute(
        f"""INSERT INTO agent_memory_audit
              (agent_id, event_type, actor_type, memory_ref_id, {column}, status, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)""",
        (agent_id, event, actor, memory_id, dict(refs or {}), status, now),
    )


def prune(session: Session, *, before: datetime) -> int:
    placeholders = ", ".join("?" for _ in OPERATIONAL_EVENTS)
    return session.changed(
        f"DELETE FROM agent_memory_audit WHERE event_type IN ({placeholders}) AND created_at < ?",
        (*OPERATIONAL_EVENTS, before),
    )
