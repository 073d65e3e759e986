"""Writes that are not semantic changes: access counters and embedding state. Neither bumps
the revision; both are silent no-ops under a pending clear, so a stale completion after a
clear began neither trips the guard nor resurrects anything."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory_adapters.sql_claims.queries import (
    NOT_FENCED,
    RECALLABLE_KINDS_SQL,
    later_of,
    recallable,
)
from memory_adapters.sql_claims.reads import distinct_ids
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import EmbeddingIdentity, EmbeddingState
from memory_core.ports.claims import EmbeddingMark

__all__ = ["mark_embedding", "mark_embeddings", "record_access", "reset_embeddings"]

_NO_VECTOR = "embedding_provider = NULL, embedding_model = NULL, embedding_dim = NULL"


def record_access(
    session: Session, agent_id: str, claim_ids: Sequence[str], *, now: datetime
) -> int:
    ids = distinct_ids(claim_ids)
    if not ids:
        return 0
    dialect = session.dialect
    return session.changed(
        f"""UPDATE agent_memory AS m
              SET access_count = access_count + 1, last_accessed = {later_of("last_accessed")}
            WHERE {dialect.owner_probe} = ? AND {dialect.id_list("m.id")}
              AND {recallable("m.")} AND {NOT_FENCED}""",
        (now, now, agent_id, ids),
    )


def mark_embedding(
    session: Session,
    agent_id: str,
    claim_id: str,
    *,
    expected_revision: int,
    identity: EmbeddingIdentity | None,
    ready: bool,
) -> bool:
    """Record an embedding outcome at the revision it was computed for; False when the row
    moved on (or is gone, or fenced). Not ready with an identity is an error; without one
    the row is searchable by text only (EmbeddingMark refuses ready without one)."""
    mark = EmbeddingMark(
        agent_id=agent_id,
        claim_id=claim_id,
        expected_revision=expected_revision,
        identity=identity,
        ready=ready,
    )
    return mark_embeddings(session, [mark])[0]


def mark_embeddings(session: Session, marks: Sequence[EmbeddingMark]) -> list[bool]:
    """Each mark's CAS, inside the caller's one transaction. Marks of one owner, revision
    and outcome — a drain batch of fresh claims is one such group — are one UPDATE: a
    statement per claim cost the drain ≈ 36 µs a claim."""
    groups: dict[tuple[str, int, bool, EmbeddingIdentity | None], list[int]] = {}
    for position, mark in enumerate(marks):
        key = (mark.agent_id, mark.expected_revision, mark.ready, mark.identity)
        groups.setdefault(key, []).append(position)
    landed = [False] * len(marks)
    for (agent_id, revision, ready, identity), positions in groups.items():
        if ready:
            state = EmbeddingState.READY
        else:
            state = EmbeddingState.ERROR if identity is not None else EmbeddingState.FTS_ONLY
        ids = distinct_ids([marks[position].claim_id for position in positions])
        rows = session.execute(
            f"""UPDATE agent_memory AS m
                  SET embedding_state = ?, embedding_provider = ?, embedding_model = ?,
                      embedding_dim = ?
                WHERE {session.dialect.owner_probe} = ? AND {session.dialect.id_list("m.id")}
                  AND m.revision = ? AND m.kind IN {RECALLABLE_KINDS_SQL} AND {NOT_FENCED}
                RETURNING id""",
            (
                state.value,
                identity.provider if identity else None,
                identity.model if identity else None,
                identity.dim if identity else None,
                agent_id,
                ids,
                revision,
            ),
        ).fetchall()
        marked = {claim_id for (claim_id,) in rows}
        for position in positions:
            landed[position] = marks[position].claim_id in marked
    return landed


def reset_embeddings(session: Session, agent_id: str, claim_ids: Sequence[str] | None) -> int:
    """Back to pending with no identity: the vector is missing or of another model."""
    where = [
        "m.agent_id = ?",
        recallable("m."),
        NOT_FENCED,
        "NOT (m.embedding_state = 'pending' AND m.embedding_provider IS NULL)",
    ]
    params: list[object] = [agent_id]
    if claim_ids is not None:
        ids = distinct_ids(claim_ids)
        if not ids:
            return 0
        where[0] = f"{session.dialect.owner_probe} = ?"  # probe the id key, not every row
        where.append(session.dialect.id_list("m.id"))
        params.append(ids)
    return session.changed(
        f"""UPDATE agent_memory AS m SET embedding_state = 'pending', {_NO_VECTOR}
            WHERE {" AND ".join(where)}""",
        params,
    )
