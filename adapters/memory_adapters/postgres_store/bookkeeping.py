"""Writes that are not semantic changes: access counters and embedding state. Neither bumps
the revision; both are silent no-ops under a pending clear, so a stale completion after a
clear began neither trips the guard nor resurrects anything."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg

from memory_adapters.postgres_store.claim_schema import RECALLABLE_KINDS_SQL, recallable
from memory_adapters.postgres_store.queries import NOT_FENCED
from memory_core.domain.claims import EmbeddingIdentity, EmbeddingState
from memory_core.domain.errors import ValidationError

__all__ = ["distinct_ids", "mark_embedding", "record_access", "reset_embeddings"]


def distinct_ids(claim_ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(cid for cid in claim_ids if isinstance(cid, str)))


def record_access(
    conn: psycopg.Connection, agent_id: str, claim_ids: Sequence[str], *, now: datetime
) -> int:
    ids = distinct_ids(claim_ids)
    if not ids:
        return 0
    return conn.execute(
        f"""UPDATE agent_memory AS m
              SET access_count = access_count + 1,
                  last_accessed = greatest(last_accessed, %s)
            WHERE m.agent_id = %s AND m.id = ANY(%s::text[])
              AND {recallable("m.")} AND {NOT_FENCED}""",
        (now, agent_id, ids),
    ).rowcount


def mark_embedding(
    conn: psycopg.Connection,
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
    return (
        conn.execute(
            f"""UPDATE agent_memory AS m
              SET embedding_state = %s, embedding_provider = %s, embedding_model = %s,
                  embedding_dim = %s
            WHERE m.agent_id = %s AND m.id = %s AND m.revision = %s
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
        ).rowcount
        == 1
    )


def reset_embeddings(
    conn: psycopg.Connection, agent_id: str, claim_ids: Sequence[str] | None
) -> int:
    """Back to pending with no identity: the vector is missing or of another model."""
    where = [
        "m.agent_id = %s",
        recallable("m."),
        NOT_FENCED,
        "NOT (m.embedding_state = 'pending' AND m.embedding_provider IS NULL)",
    ]
    params: list[object] = [agent_id]
    if claim_ids is not None:
        ids = distinct_ids(claim_ids)
        if not ids:
            return 0
        where.append("m.id = ANY(%s::text[])")
        params.append(ids)
    return conn.execute(
        f"""UPDATE agent_memory AS m
              SET embedding_state = 'pending', embedding_provider = NULL,
                  embedding_model = NULL, embedding_dim = NULL
            WHERE {" AND ".join(where)}""",
        params,
    ).rowcount
