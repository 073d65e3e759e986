"""A vector namespace row — identity, generation, the approximate flag — and turning query
rows into hits. Shared by the store's methods; every statement names its agent."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import psycopg

from memory_adapters.postgres_store import vector_sql
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import IdentityMismatch
from memory_core.ports.vectors import ReadyCertificate, VectorHit

__all__ = ["Certified", "Namespace", "hits_of", "lock_namespace"]


@attrs.frozen(kw_only=True)
class Namespace:
    identity: EmbeddingIdentity
    generation: int
    approximate: bool


async def lock_namespace(
    conn: psycopg.AsyncConnection,
    agent_id: str,
    identity: EmbeddingIdentity | None,
    *,
    exclusive: bool,
) -> Namespace | None:
    """The agent's namespace row, locked for this transaction; created for `identity` when
    missing; IdentityMismatch when it holds another identity (R-PROV-4)."""
    lock = " FOR UPDATE" if exclusive else " FOR SHARE"
    row = await (await conn.execute(vector_sql.LOCK_NAMESPACE + lock, (agent_id,))).fetchone()
    if row is None and identity is not None:
        await conn.execute(
            vector_sql.INSERT_NAMESPACE, (agent_id, identity.provider, identity.model, identity.dim)
        )
        row = await (await conn.execute(vector_sql.LOCK_NAMESPACE + lock, (agent_id,))).fetchone()
    if row is None:
        return None
    provider, model, dim, generation, is_approximate = row
    stored = EmbeddingIdentity(provider=provider, model=model, dim=dim)
    if identity is not None and stored != identity:
        raise IdentityMismatch(
            f"vector namespace of agent {agent_id!r} holds {_describe(stored)}, not"
            f" {_describe(identity)}; rebuild it to change identity"
        )
    return Namespace(identity=stored, generation=generation, approximate=is_approximate)


@attrs.frozen(kw_only=True)
class Certified:
    """A certificate this process granted, and what it was granted against."""

    certificate: ReadyCertificate
    generation: int  # the namespace generation in the database when it was granted
    approximate: bool


def _describe(identity: EmbeddingIdentity) -> str:
    return f"{identity.provider}/{identity.model} dim {identity.dim}"


def hits_of(
    rows: Sequence[tuple[object, ...]], *, generation: int, answers: int
) -> list[list[VectorHit]] | None:
    """Hits per query vector from (generation, position, claim_id, distance) rows; None
    when the namespace is gone or was replaced since `generation` was read."""
    if not rows or rows[0][0] != generation:
        return None
    hits: list[list[VectorHit]] = [[] for _ in range(answers)]
    for _generation, position, claim_id, distance in rows:
        if claim_id is not None:
            hits[int(position) - 1].append(  # type: ignore[call-overload]
                VectorHit(claim_id=str(claim_id), similarity=1.0 - float(distance))  # type: ignore[arg-type]
            )
    return hits
