"""Claim reads: by id, by slot, management listing, authoritative re-validation, pending
embeddings.
Every read is fenced by a pending clear in the same statement (R-FORGET-3), and a row a raw
writer corrupted is skipped, never allowed to fail the batch (R-TIME-4)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

import apsw

from memory_adapters.sqlite_store.queries import (
    CLAIM_SELECT,
    NOT_FENCED,
    fetch_claim_row,
    scope_clause,
)
from memory_adapters.sqlite_store.rows import ClaimRow, CorruptRow, structure_row
from memory_adapters.sqlite_store.schema import RECALLABLE_KINDS_SQL, recallable
from memory_core.domain.claims import Claim, EmbeddingIdentity
from memory_core.domain.errors import NotFound, ScopeError, ValidationError
from memory_core.domain.scope import Scope, ScopeFilter

__all__ = [
    "claims_of",
    "find_live_by_slot",
    "get",
    "list_applicable_by_ids",
    "list_claims",
    "list_pending_embeddings",
]

_log = logging.getLogger(__name__)
# Rows read per slot lookup: the newest valid one wins, and a corrupt newest row must not
# hide an older valid holder (R-TIME-4). Normally there is exactly one.
_SLOT_PROBE = 8


def claims_of(rows: Sequence[Sequence[object]]) -> list[Claim]:
    """Domain claims of raw SELECT rows; corrupt rows are logged by id and skipped."""
    claims: list[Claim] = []
    for values in rows:
        try:
            claims.append(structure_row(values, ClaimRow).to_claim())
        except CorruptRow as exc:
            _log.warning("skipping corrupt claim row: %s", exc)
    return claims


def get(conn: apsw.Connection, agent_id: str, claim_id: str) -> Claim:
    row = fetch_claim_row(conn, agent_id, claim_id)
    if row is None:
        raise NotFound(f"no claim {claim_id} for this agent")
    return row.to_claim()


def find_live_by_slot(
    conn: apsw.Connection, agent_id: str, scope: Scope, slot: str
) -> Claim | None:
    """The newest recallable holder of `slot` in exactly `scope`, through the partial index
    `agent_memory_live_slot` (the WHERE repeats its predicate so the planner can use it)."""
    if not isinstance(scope, Scope):
        raise ScopeError("scope", "must be a Scope")
    if not isinstance(slot, str) or not slot.strip():
        raise ValidationError("slot", "must be a non-empty slot key")
    if scope.is_agent:
        scope_sql, params = "m.scope_type = 'agent' AND m.scope_id IS NULL", [agent_id]
    else:
        scope_sql, params = (
            "m.scope_type = ? AND m.scope_id = ?",
            [
                agent_id,
                scope.kind.value,
                scope.scope_id,
            ],
        )
    sql = f"""SELECT {CLAIM_SELECT} FROM agent_memory m
              WHERE m.agent_id = ? AND {scope_sql} AND m.slot = ? AND m.slot IS NOT NULL
                AND {recallable("m.")} AND {NOT_FENCED}
              ORDER BY m.created_at DESC, m.id DESC LIMIT {_SLOT_PROBE}"""
    found = claims_of(conn.execute(sql, (*params, slot)).fetchall())
    return found[0] if found else None


def list_claims(
    conn: apsw.Connection,
    agent_id: str,
    *,
    scope_filter: ScopeFilter | None,
    include_inactive: bool,
    limit: int,
    after_id: str | None,
) -> list[Claim]:
    if limit <= 0:
        return []
    where = ["m.agent_id = ?", f"m.kind IN {RECALLABLE_KINDS_SQL}", NOT_FENCED]
    params: list[object] = [agent_id]
    if not include_inactive:
        where.append(recallable("m."))
    if scope_filter is not None:
        scope_sql, scope_params = scope_clause(scope_filter)
        where.append(scope_sql)
        params += scope_params
    if after_id is not None:
        # Keyset paging; an unknown cursor compares with NULL and yields an empty page.
        where.append(
            "(m.created_at, m.id) < (SELECT created_at, id FROM agent_memory"
            " WHERE agent_id = ? AND id = ?)"
        )
        params += [agent_id, after_id]
    sql = (
        f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE {' AND '.join(where)}"
        " ORDER BY m.created_at DESC, m.id DESC LIMIT ?"
    )
    return claims_of(conn.execute(sql, (*params, limit)).fetchall())


def list_applicable_by_ids(
    conn: apsw.Connection,
    agent_id: str,
    claim_ids: Sequence[str],
    *,
    scope_filter: ScopeFilter,
    embedding: EmbeddingIdentity | None,
    revisions: Mapping[str, int] | None,
) -> list[Claim]:
    ordered = list(dict.fromkeys(cid for cid in claim_ids if isinstance(cid, str)))
    if not ordered:
        return []
    scope_sql, scope_params = scope_clause(scope_filter)
    where = [
        # `+` keeps the planner off the (agent_id, ...) indexes: walking every row of the
        # agent to test it against a short id list cost 66 ms at 1M claims; probing the id
        # key costs microseconds. The owner is still checked on every row found.
        "+m.agent_id = ?",
        "m.id IN (SELECT value FROM json_each(?))",
        recallable("m."),
        NOT_FENCED,
        scope_sql,
    ]
    params: list[object] = [agent_id, json.dumps(ordered), *scope_params]
    if embedding is not None:
        where.append(
            "m.embedding_state = 'ready' AND m.embedding_provider = ?"
            " AND m.embedding_model = ? AND m.embedding_dim = ?"
        )
        params += [embedding.provider, embedding.model, embedding.dim]
    sql = f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE {' AND '.join(where)}"
    by_id = {claim.id: claim for claim in claims_of(conn.execute(sql, params).fetchall())}
    if revisions:
        by_id = {
            cid: claim
            for cid, claim in by_id.items()
            if cid not in revisions or revisions[cid] == claim.revision
        }
    return [by_id[cid] for cid in ordered if cid in by_id]


def list_pending_embeddings(conn: apsw.Connection, agent_id: str, *, limit: int) -> list[Claim]:
    if limit <= 0:
        return []
    sql = f"""SELECT {CLAIM_SELECT} FROM agent_memory m
              WHERE m.agent_id = ? AND m.embedding_state = 'pending' AND {recallable("m.")}
                AND {NOT_FENCED}
              ORDER BY m.created_at, m.id LIMIT ?"""
    return claims_of(conn.execute(sql, (agent_id, limit)).fetchall())


def list_ready_ids(conn: apsw.Connection, agent_id: str, identity: EmbeddingIdentity) -> list[str]:
    sql = f"""SELECT m.id FROM agent_memory m
              WHERE m.agent_id = ? AND m.embedding_state = 'ready' AND m.embedding_provider = ?
                AND m.embedding_model = ? AND m.embedding_dim = ? AND {recallable("m.")}
                AND {NOT_FENCED}
              ORDER BY m.id"""
    rows = conn.execute(sql, (agent_id, identity.provider, identity.model, identity.dim))
    return [str(row[0]) for row in rows]
