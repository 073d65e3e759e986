"""The audit trail: ids, counts and closed enums only — never content (R-ARCH-6).

Events are written inside the transaction of the mutation they describe. Retention prunes
operational events only; it never touches lineage, which lives in its own table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import apsw

from memory_core.domain.claims import WriteOrigin

__all__ = ["OPERATIONAL_EVENTS", "actor_for", "prune", "record"]

# Events that only describe housekeeping; retention may drop them. User-visible events
# (add, delete, archive, restore, manual_edit, directives) are kept.
OPERATIONAL_EVENTS = ("memory/repair", "memory/clear_batch")

_ACTORS = {
    WriteOrigin.USER_ADD: "user",
    WriteOrigin.MODEL_TOOL: "runtime",
    WriteOrigin.EXTRACTION: "scheduler",
    WriteOrigin.IMPORT: "system",
}


def actor_for(origin: WriteOrigin) -> str:
    return _ACTORS[origin]


def record(
    conn: apsw.Connection,
    *,
    agent_id: str,
    event: str,
    actor: str,
    now_ms: int,
    memory_id: str | None = None,
    refs: Mapping[str, int | str | bool | None] | None = None,
    status: str = "completed",
) -> None:
    """Append one event. `refs` values are ids, counts and enums by construction: callers
    pass nothing else, and the type says so."""
    conn.execute(
        """INSERT INTO agent_memory_audit
             (agent_id, event_type, actor_type, memory_ref_id, refs_json, status, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)""",
        (agent_id, event, actor, memory_id, json.dumps(dict(refs or {})), status, now_ms),
    )


def prune(conn: apsw.Connection, *, before_ms: int) -> int:
    placeholders = ", ".join("?" for _ in OPERATIONAL_EVENTS)
    conn.execute(
        f"DELETE FROM agent_memory_audit WHERE event_type IN ({placeholders}) AND created_at < ?",
        (*OPERATIONAL_EVENTS, before_ms),
    )
    return conn.changes()
