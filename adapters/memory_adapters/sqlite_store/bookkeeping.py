"""Writes that are not semantic changes: access counters and embedding state. Neither bumps
the revision; both are silent no-ops under a pending clear, so a stale completion after a
clear began neither trips the guard nor resurrects anything."""

from __future__ import annotations

import json
from collections.abc import Sequence

import apsw

from memory_adapters.sqlite_store.queries import NOT_FENCED
from memory_adapters.sqlite_store.schema import RECALLABLE_KINDS_SQL, recallable
from memory_core.domain.claims import EmbeddingIdentity, EmbeddingState
from memory_core.domain.errors import ValidationError

__all__ = ["mark_embedding", "record_access", "reset_embeddings"]


def record_access(
    conn: apsw.Connection, agent_id: str, claim_ids: Sequence[str], *, now_ms: int
) -> int:
    ids = list(dict.fromkeys(cid for cid in claim_ids if isinstance(cid, str)))
    if not ids:
        return 0
    conn.execute(
        f"""UPDATE agent_memory AS m
              SET access_count = access_count + 1,
                  last_accessed = max(COALESCE(last_accessed, 0), ?)
            WHERE +m.agent_id = ? AND m.id IN (SELECT value FROM json_each(?))
              AND {recallable("m.")} AND {NOT_FENCED}""",
        (now_ms, agent_id, json.dumps(ids)),
    )
    return conn.changes()


def mark_embedding(
    conn: apsw.Connection,
    agent_id: str,
    claim_id: str,
    *,
    expected_revision: int,
    identity: EmbeddingIdentity | None,
    ready: bool,
) -> bool:
    if ready and identity is None:
        raise ValidationError("identity", "required to mark an embedding ready")
    if ready:
        state = EmbeddingState.READY
    else:
        state = EmbeddingState.ERROR if identity is not None else EmbeddingState.FTS_ONLY
    conn.execute(
        f"""UPDATE agent_memory AS m
              SET embedding_state = ?, embedding_provider = ?, embedding_model = ?,
                  embedding_dim = ?
            WHERE m.agent_id = ? AND m.id = ? AND m.revision = ?
              AND m.kind IN {RECALLABLE_KINDS_SQL} AND {NOT_FENCED}""",
        (
            state.value,
            identity.provider if identity else None,
            identity.model if identity else None,
            identity.dim if identity else None,
            agent_id,
            claim_id,
            expected_revision,
        ),
    )
    return conn.changes() == 1


def reset_embeddings(conn: apsw.Connection, agent_id: str, claim_ids: Sequence[str] | None) -> int:
    """Back to pending with no identity: the vector is missing or of another model."""
    where = [
        "m.agent_id = ?",
        recallable("m."),
        NOT_FENCED,
        "NOT (m.embedding_state = 'pending' AND m.embedding_provider IS NULL)",
    ]
    params: list[object] = [agent_id]
    if claim_ids is not None:
        ids = list(dict.fromkeys(cid for cid in claim_ids if isinstance(cid, str)))
        if not ids:
            return 0
        where.append("m.id IN (SELECT value FROM json_each(?))")
        where[0] = "+m.agent_id = ?"  # probe the id key, not every row of the agent
        params.append(json.dumps(ids))
    conn.execute(
        f"""UPDATE agent_memory AS m
              SET embedding_state = 'pending', embedding_provider = NULL,
                  embedding_model = NULL, embedding_dim = NULL
            WHERE {" AND ".join(where)}""",
        params,
    )
    return conn.changes()
