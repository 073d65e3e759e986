"""APPROXIMATE search, opt-in per agent: a pgvector HNSW index for very large namespaces.

Not the default and never reached by accident. SPEC R-VEC-1 / R-ARCH-6 keep the hot path
an exact scan; this module is used only for a namespace an operator explicitly switched
with `PostgresVectorStore.enable_approximate_search`, and every query of such a namespace
is approximate: it may miss true nearest neighbours, and equal distances are no longer
ordered by claim id inside the index scan. Re-validation against the claim store still
applies to every hit (R-READ-3); what changes is recall, not safety.

The index is partial (`WHERE agent_id = '<agent>'`) over `embedding::vector(dim)`, so it
serves exactly one namespace and only queries written with that very expression and the
literal agent id — which the exact statements in `vector_sql` never are. A rebuild or drop
of the namespace drops the index and clears the flag.
"""

from __future__ import annotations

import hashlib

import attrs
import psycopg
from psycopg import sql

from memory_core.domain.claims import EmbeddingIdentity

__all__ = [
    "PLANNER_SETTINGS",
    "HnswParameters",
    "batch_query",
    "build_index",
    "by_id_query",
    "drop_index",
    "index_name",
    "tune",
]


@attrs.frozen(kw_only=True)
class HnswParameters:
    """pgvector's HNSW knobs: larger `ef_search` trades latency for recall."""

    m: int = attrs.field(default=16, validator=attrs.validators.in_(range(2, 101)))
    ef_construction: int = attrs.field(default=64, validator=attrs.validators.in_(range(4, 1001)))
    ef_search: int = attrs.field(default=100, validator=attrs.validators.in_(range(1, 1001)))
    # The build is far faster when the whole graph fits (pgvector warns when it does not).
    build_memory_mb: int = attrs.field(
        default=512, validator=attrs.validators.in_(range(64, 65537))
    )


def index_name(agent_id: str) -> str:
    return "agent_memory_vector_ann_" + hashlib.sha256(agent_id.encode()).hexdigest()[:24]


async def build_index(
    conn: psycopg.AsyncConnection, agent_id: str, dim: int, params: HnswParameters
) -> None:
    """Create the agent's index and mark its namespace approximate (one transaction)."""
    await conn.execute(
        "SELECT set_config('maintenance_work_mem', %s, true)", (f"{params.build_memory_mb}MB",)
    )
    await conn.execute(
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {name} ON agent_memory_vector"
            " USING hnsw ((embedding::vector({dim})) vector_cosine_ops)"
            " WITH (m = {m}, ef_construction = {ef}) WHERE agent_id = {agent}"
        ).format(
            name=sql.Identifier(index_name(agent_id)),
            dim=sql.Literal(dim),
            m=sql.Literal(params.m),
            ef=sql.Literal(params.ef_construction),
            agent=sql.Literal(agent_id),
        )
    )
    await conn.execute(
        "UPDATE agent_memory_vector_namespace SET approximate = true WHERE agent_id = %s",
        (agent_id,),
    )
    await conn.execute("ANALYZE agent_memory_vector")


async def drop_index(conn: psycopg.AsyncConnection, agent_id: str) -> None:
    await conn.execute(
        sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(index_name(agent_id)))
    )
    await conn.execute(
        "UPDATE agent_memory_vector_namespace SET approximate = false"
        " WHERE agent_id = %s AND approximate",
        (agent_id,),
    )


# An opted-in namespace is served through its index consistently, not only when the
# planner's estimate favours it; transaction-local, so nothing else is affected.
PLANNER_SETTINGS = (
    ("enable_seqscan", "off"),
    ("enable_bitmapscan", "off"),
    ("enable_sort", "off"),
)


async def tune(conn: psycopg.AsyncConnection, params: HnswParameters) -> None:
    """Transaction-local settings of an approximate query."""
    for name, value in (*PLANNER_SETTINGS, ("hnsw.ef_search", str(params.ef_search))):
        await conn.execute("SELECT set_config(%s, %s, true)", (name, value))


def _distance(identity: EmbeddingIdentity, query: str) -> sql.Composed:
    # The index expression, verbatim: anything else and the planner cannot use the index.
    return sql.SQL("(v.embedding::vector({dim})) <=> ({query})::vector({dim})").format(
        dim=sql.Literal(identity.dim), query=sql.SQL(query)
    )


def batch_query(agent_id: str, identity: EmbeddingIdentity) -> sql.Composed:
    """The approximate twin of `vector_sql.BATCH_QUERY`: ordered by distance alone inside
    the lateral (so the index can deliver rows in order), ties by claim id outside."""
    return sql.SQL(
        """SELECT ns.generation, q.ord, h.claim_id, h.distance
  FROM agent_memory_vector_namespace ns
  CROSS JOIN unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, ord)
  LEFT JOIN LATERAL (
    SELECT v.claim_id, {distance} AS distance
    FROM agent_memory_vector v
    WHERE v.agent_id = {agent}
    ORDER BY distance
    LIMIT %(k)s
  ) h ON true
  WHERE ns.agent_id = %(agent)s
  ORDER BY q.ord, h.distance, h.claim_id"""
    ).format(distance=_distance(identity, "q.vec"), agent=sql.Literal(agent_id))


def by_id_query(agent_id: str, identity: EmbeddingIdentity) -> sql.Composed:
    return sql.SQL(
        """SELECT ns.generation, 1::bigint, h.claim_id, h.distance
  FROM agent_memory_vector_namespace ns
  LEFT JOIN LATERAL (
    SELECT q.embedding AS vec FROM agent_memory_vector q
    WHERE q.agent_id = %(agent)s AND q.claim_id = %(id)s AND q.dim = %(dim)s
  ) q ON true
  LEFT JOIN LATERAL (
    SELECT v.claim_id, {distance} AS distance
    FROM agent_memory_vector v
    WHERE v.agent_id = {agent} AND v.claim_id <> %(id)s AND q.vec IS NOT NULL
    ORDER BY distance
    LIMIT %(k)s
  ) h ON true
  WHERE ns.agent_id = %(agent)s
  ORDER BY h.distance, h.claim_id"""
    ).format(distance=_distance(identity, "q.vec"), agent=sql.Literal(agent_id))
