"""SQL fragments every claim statement shares: the column list, the recallable predicate,
the owner+scope predicate and the clear fence, and the owner's row by id. Every statement
names its agent (R-STORE-3)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from memory_adapters.sql_claims.rows import CLAIM_COLUMNS, ClaimRow, CorruptRow
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.scope import Scope, ScopeFilter

__all__ = [
    "CLAIM_SELECT",
    "NOT_FENCED",
    "RECALLABLE_KINDS_SQL",
    "claim_row",
    "claim_select",
    "claims_of",
    "exact_scope",
    "fetch_claim_row",
    "later_of",
    "owned_row",
    "recallable",
    "scope_clause",
    "sql_list",
]

_log = logging.getLogger(__name__)


def sql_list(values: Iterable[object]) -> str:
    """`('a', 'b')` of closed enum values, for DDL and fixed predicates (never user input)."""
    return "(" + ", ".join(f"'{getattr(v, 'value', v)}'" for v in values) + ")"


RECALLABLE_KINDS_SQL = sql_list(kind for kind in ClaimKind if not kind.is_internal)


def recallable(p: str = "") -> str:
    """Rows recall may return: active, not superseded, not internal."""
    return (
        f"({p}lifecycle_state = 'active' AND {p}superseded_by IS NULL"
        f" AND {p}kind IN {RECALLABLE_KINDS_SQL})"
    )


def later_of(column: str) -> str:
    """The later of `column` and a bound instant (bind it twice); a NULL column gives the
    instant. Portable where `max(a, b)` and `greatest(a, b)` are not."""
    return f"CASE WHEN {column} > ? THEN {column} ELSE ? END"


def claim_select(alias: str = "m") -> str:
    return ", ".join(f"{alias}.{column}" for column in CLAIM_COLUMNS)


CLAIM_SELECT = claim_select()

# R-FORGET-3: while the agent has a clear job its claims are unreadable. A predicate of the
# same statement, so no read can slip between a check and the query.
NOT_FENCED = "NOT EXISTS (SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = m.agent_id)"


def exact_scope(scope: Scope, alias: str = "m") -> tuple[str, list[object]]:
    """Rows of exactly `scope`, in the column order of the scoped indexes."""
    if scope.is_agent:
        return f"{alias}.scope_type = 'agent' AND {alias}.scope_id IS NULL", []
    return f"{alias}.scope_type = ? AND {alias}.scope_id = ?", [scope.kind.value, scope.scope_id]


def scope_clause(scope_filter: ScopeFilter, alias: str = "m") -> tuple[str, list[object]]:
    """`(…)` admitting exactly the filter's scopes; an empty filter admits nothing."""
    parts: list[str] = []
    params: list[object] = []
    for scope in scope_filter.scopes:
        if scope.is_agent:
            parts.append(f"{alias}.scope_type = 'agent'")
        else:
            parts.append(f"({alias}.scope_type = ? AND {alias}.scope_id = ?)")
            params += [scope.kind.value, scope.scope_id or ""]
    if not parts:
        return "(1 = 0)", []
    return "(" + " OR ".join(parts) + ")", params


def claim_row(session: Session, values: Sequence[object]) -> ClaimRow:
    return session.dialect.row_reader.claim_row(values)


def claims_of(session: Session, rows: Iterable[Sequence[object]]) -> list[Claim]:
    """Domain claims of raw SELECT rows; corrupt rows are logged by id and skipped."""
    read = session.dialect.row_reader.claim
    claims: list[Claim] = []
    for values in rows:
        try:
            claims.append(read(values))
        except CorruptRow as exc:
            _log.warning("skipping corrupt claim row: %s", exc)
    return claims


def owned_row(
    session: Session,
    agent_id: str,
    claim_id: str,
    *,
    fenced: bool = True,
    for_update: bool = False,
) -> Sequence[object] | None:
    """The owner's raw row by id, or None; a foreign id is indistinguishable from an unknown
    one. `for_update` locks it where the dialect can (the caller is about to write it)."""
    fence = f" AND {NOT_FENCED}" if fenced else ""
    lock = session.dialect.for_update if for_update else ""
    return session.one(
        f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE m.agent_id = ? AND m.id = ?{fence}{lock}",
        (agent_id, claim_id),
    )


def fetch_claim_row(
    session: Session,
    agent_id: str,
    claim_id: str,
    *,
    fenced: bool = True,
    for_update: bool = False,
) -> ClaimRow | None:
    """`owned_row` as a ClaimRow, for a write that needs the stored columns."""
    row = owned_row(session, agent_id, claim_id, fenced=fenced, for_update=for_update)
    return None if row is None else claim_row(session, row)
