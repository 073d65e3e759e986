"""DDL of the vector component: one namespace row per agent, one table of vectors for all.

The namespace row is the agent's identity (provider, model, dimension) and its generation.
Generations come from one sequence, so they never repeat: a certificate granted before a
rebuild or drop — by any process sharing the database — can never match again. Each vector
row repeats its namespace's dimension under a foreign key and a CHECK on the stored value,
so the database itself refuses to mix dimensions inside a namespace (R-PROV-4).

The `embedding` column has no declared dimension (agents may use different models), so no
approximate index can serve it by accident: the default query is an exact scan
(R-VEC-1, R-ARCH-6); the opt-in approximate index lives in `approximate`.
"""

from __future__ import annotations

import psycopg

from memory_adapters.postgres_store.migrations import Extensions, Migration

__all__ = ["COMPONENT", "MIGRATIONS", "REQUIRED_EXTENSIONS"]

COMPONENT = "vectors"
REQUIRED_EXTENSIONS = ("vector",)

_V1 = (
    "CREATE SEQUENCE agent_memory_vector_generation AS bigint",
    """CREATE TABLE agent_memory_vector_namespace (
      agent_id text COLLATE "C" PRIMARY KEY CHECK (length(agent_id) BETWEEN 1 AND 128),
      provider text NOT NULL,
      model text NOT NULL,
      dim integer NOT NULL CHECK (dim BETWEEN 1 AND 16000),
      generation bigint NOT NULL DEFAULT nextval('agent_memory_vector_generation'),
      approximate boolean NOT NULL DEFAULT false,
      UNIQUE (agent_id, dim)
    )""",
    """CREATE TABLE agent_memory_vector (
      agent_id text COLLATE "C" NOT NULL,
      claim_id text COLLATE "C" NOT NULL CHECK (length(claim_id) BETWEEN 1 AND 512),
      dim integer NOT NULL,
      embedding vector NOT NULL CHECK (vector_dims(embedding) = dim),
      PRIMARY KEY (agent_id, claim_id),
      FOREIGN KEY (agent_id, dim) REFERENCES agent_memory_vector_namespace (agent_id, dim)
        ON DELETE CASCADE
    )""",
)


def _v1(conn: psycopg.Connection, extensions: Extensions) -> None:
    for statement in _V1:
        conn.execute(statement)


MIGRATIONS = (
    Migration(
        component=COMPONENT,
        version=1,
        description="vector namespaces (identity, generation) and pgvector rows",
        apply=_v1,
    ),
)
