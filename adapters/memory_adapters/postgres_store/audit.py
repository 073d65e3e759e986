"""The audit trail: ids, counts and closed enums only — never content (R-ARCH-6).

Events are written inside the transaction of the mutation they describe. Retention prunes
operational events only; it never touches lineage, which lives in its own table.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb

__all__ = ["OPERATIONAL_EVENTS", "prune", "record"]

# Housekeeping events retention may drop; user-visible events (add, delete, archive, restore,
# manual_edit, directives, clear) are kept.
OPERATIONAL_EVENTS = ("memory/repair", "memory/clear_batch")


def record(
    conn: psycopg.Connection,
    *,
    agent_id: str,
    event: str,
    actor: str,
    now: datetime,
    memory_id: str | None = None,
    refs: Mapping[str, int | str | bool | None] | None = None,
    status: str = "completed",
) -> None:
    """Append one event. `refs` values are ids, counts and enums by construction."""
    conn.execute(
        """INSERT INTO agent_memory_audit
             (agent_id, event_type, actor_type, memory_ref_id, refs, status, created_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s)""",
        (agent_id, event, actor, memory_id, Jsonb(dict(refs or {})), status, now),
    )


def prune(conn: psycopg.Connection, *, before: datetime) -> int:
    cursor = conn.execute(
        "DELETE FROM agent_memory_audit WHERE event_type = ANY(%s) AND created_at < %s",
        (list(OPERATIONAL_EVENTS), before),
    )
    return cursor.rowcount
