"""SQL fragments every claim read shares: the owner+scope predicate and the clear fence.
Every statement names its agent (R-STORE-3)."""

from __future__ import annotations

import psycopg

from memory_adapters.postgres_store.rows import ClaimRow, claim_select, structure_row
from memory_core.domain.scope import ScopeFilter

__all__ = ["CLAIM_SELECT", "NOT_FENCED", "fetch_claim_row", "scope_clause"]

CLAIM_SELECT = claim_select()

# R-FORGET-3: while the agent has a clear job its claims are unreadable. A predicate of the
# same statement, so no read can slip between a check and the query.
NOT_FENCED = "NOT EXISTS (SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = m.agent_id)"


def scope_clause(scope_filter: ScopeFilter, alias: str = "m") -> tuple[str, list[str]]:
    """`(…)` admitting exactly the filter's scopes; an empty filter admits nothing."""
    parts: list[str] = []
    params: list[str] = []
    for scope in scope_filter.scopes:
        if scope.is_agent:
            parts.append(f"{alias}.scope_type = 'agent'")
        else:
            parts.append(f"({alias}.scope_type = %s AND {alias}.scope_id = %s)")
            params += [scope.kind.value, scope.scope_id or ""]
    if not parts:
        return "false", []
    return "(" + " OR ".join(parts) + ")", params


def fetch_claim_row(
    conn: psycopg.Connection,
    agent_id: str,
    claim_id: str,
    *,
    fenced: bool = True,
    for_update: bool = False,
) -> ClaimRow | None:
    """The owner's row by id, or None; a foreign id is indistinguishable from an unknown one."""
    fence = f" AND {NOT_FENCED}" if fenced else ""
    lock = " FOR UPDATE" if for_update else ""
    row = conn.execute(
        f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE m.agent_id = %s AND m.id = %s"
        f"{fence}{lock}",
        (agent_id, claim_id),
    ).fetchone()
    return None if row is None else structure_row(row, ClaimRow)
