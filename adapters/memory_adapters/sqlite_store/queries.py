"""SQL fragments every claim read shares: the column list, the owner+scope predicate, and
the clear fence. Every query names its agent (R-STORE-3)."""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from memory_adapters.sqlite_store.rows import CLAIM_COLUMNS, ClaimRow, structure_row
from memory_core.domain.scope import ScopeFilter

__all__ = [
    "CLAIM_SELECT",
    "NOT_FENCED",
    "claim_select",
    "fetch_claim_row",
    "fetch_claim_rows",
    "scope_clause",
]


def claim_select(alias: str = "m") -> str:
    return ", ".join(f"{alias}.{column}" for column in CLAIM_COLUMNS)


CLAIM_SELECT = claim_select()

# R-FORGET-3: while the agent has a clear job its claims are unreadable. Written as a
# predicate of the same statement, so no read can slip between a check and the query.
NOT_FENCED = "NOT EXISTS (SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = m.agent_id)"


def scope_clause(scope_filter: ScopeFilter, alias: str = "m") -> tuple[str, list[str]]:
    """`(…)` admitting exactly the filter's scopes; an empty filter admits nothing."""
    parts: list[str] = []
    params: list[str] = []
    for scope in scope_filter.scopes:
        if scope.is_agent:
            parts.append(f"{alias}.scope_type = 'agent'")
        else:
            parts.append(f"({alias}.scope_type = ? AND {alias}.scope_id = ?)")
            params += [scope.kind.value, scope.scope_id or ""]
    if not parts:
        return "(0)", []
    return "(" + " OR ".join(parts) + ")", params


def fetch_claim_row(
    conn: apsw.Connection, agent_id: str, claim_id: str, *, fenced: bool = True
) -> ClaimRow | None:
    """The owner's row by id, or None; a foreign id is indistinguishable from an unknown one."""
    fence = f"AND {NOT_FENCED}" if fenced else ""
    row = conn.execute(
        f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE m.agent_id = ? AND m.id = ? {fence}",
        (agent_id, claim_id),
    ).fetchone()
    return None if row is None else structure_row(row, ClaimRow)


def fetch_claim_rows(conn: apsw.Connection, sql: str, params: Sequence[object]) -> list[ClaimRow]:
    return [structure_row(row, ClaimRow) for row in conn.execute(sql, tuple(params))]
