"""The vector store's statements. Every one names its agent (R-PRIV-2).

Queries are exact: `ORDER BY embedding <=> q, claim_id` over the agent's rows, with no
index on `embedding` that could answer instead (R-VEC-1). They join the namespace row, so
one round trip both checks the certificate's generation and scans; rows whose dimension is
not the certificate's are never compared. Claim ids compare in code-point order (the id
columns are `COLLATE "C"`), the same order Python's `sorted` gives.
"""

from __future__ import annotations

__all__ = [
    "BATCH_QUERY",
    "BY_ID_QUERY",
    "DELETE_IDS",
    "DELETE_ORPHANS",
    "DROP_NAMESPACE",
    "INSERT_NAMESPACE",
    "LIST_IDS",
    "LOCK_NAMESPACE",
    "PRESENT_IDS",
    "REBUILD_NAMESPACE",
    "UPSERT",
]

LOCK_NAMESPACE = """SELECT provider, model, dim, generation, approximate
  FROM agent_memory_vector_namespace WHERE agent_id = %s"""

INSERT_NAMESPACE = """INSERT INTO agent_memory_vector_namespace (agent_id, provider, model, dim)
  VALUES (%s, %s, %s, %s) ON CONFLICT (agent_id) DO NOTHING"""

REBUILD_NAMESPACE = """INSERT INTO agent_memory_vector_namespace AS ns
    (agent_id, provider, model, dim, approximate)
  VALUES (%s, %s, %s, %s, false)
  ON CONFLICT (agent_id) DO UPDATE SET provider = excluded.provider, model = excluded.model,
    dim = excluded.dim, approximate = false,
    generation = nextval('agent_memory_vector_generation')"""

DROP_NAMESPACE = "DELETE FROM agent_memory_vector_namespace WHERE agent_id = %s"

UPSERT = """INSERT INTO agent_memory_vector (agent_id, claim_id, dim, embedding)
  SELECT %(agent)s, u.claim_id, %(dim)s, u.embedding
  FROM unnest(%(ids)s::text[], %(vectors)s::vector[]) AS u(claim_id, embedding)
  ON CONFLICT (agent_id, claim_id) DO UPDATE SET embedding = excluded.embedding,
    dim = excluded.dim"""

DELETE_IDS = """DELETE FROM agent_memory_vector
  WHERE agent_id = %s AND claim_id = ANY(%s::text[]) RETURNING claim_id"""

# Vectors without a ready claim, and values no scan can use (a raw writer's zero vector).
DELETE_ORPHANS = """DELETE FROM agent_memory_vector
  WHERE agent_id = %s AND (NOT (claim_id = ANY(%s::text[])) OR vector_norm(embedding) = 0)
  RETURNING claim_id"""

PRESENT_IDS = """SELECT claim_id FROM agent_memory_vector
  WHERE agent_id = %s AND claim_id = ANY(%s::text[])"""

LIST_IDS = "SELECT claim_id FROM agent_memory_vector WHERE agent_id = %s ORDER BY claim_id"


# The two reads share one shape: the namespace row, then a LATERAL top-k per query vector.
# An empty namespace still returns its row (with NULL hits), so "no vectors" and "no
# namespace" stay distinguishable.
BATCH_QUERY = """SELECT ns.generation, q.ord, h.claim_id, h.distance
  FROM agent_memory_vector_namespace ns
  CROSS JOIN unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, ord)
  LEFT JOIN LATERAL (
    SELECT v.claim_id, v.embedding <=> q.vec AS distance
    FROM agent_memory_vector v
    WHERE v.agent_id = ns.agent_id AND v.dim = %(dim)s
    ORDER BY distance, v.claim_id
    LIMIT %(k)s
  ) h ON true
  WHERE ns.agent_id = %(agent)s
  ORDER BY q.ord, h.distance, h.claim_id"""

BY_ID_QUERY = """SELECT ns.generation, 1::bigint, h.claim_id, h.distance
  FROM agent_memory_vector_namespace ns
  LEFT JOIN LATERAL (
    SELECT v.claim_id, v.embedding <=> q.embedding AS distance
    FROM agent_memory_vector q
    JOIN agent_memory_vector v
      ON v.agent_id = q.agent_id AND v.claim_id <> q.claim_id AND v.dim = %(dim)s
    WHERE q.agent_id = ns.agent_id AND q.claim_id = %(id)s AND q.dim = %(dim)s
    ORDER BY distance, v.claim_id
    LIMIT %(k)s
  ) h ON true
  WHERE ns.agent_id = %(agent)s
  ORDER BY h.distance, h.claim_id"""
