"""PostgreSQL stores: the authoritative claim store and a pgvector vector store, behind the
same ports and contract suites as the embedded SQLite + DuckDB pair (R-BEYOND-4).

For deployments that outgrow one machine: several processes or hosts share one database,
each agent's rows stay isolated by owner in every statement (R-STORE-3, R-PRIV-2). See
docs/scale-out.md for when to move, configuration, and what is (and is not) guaranteed.
"""

from __future__ import annotations

from memory_adapters.postgres_store.approximate import HnswParameters
from memory_adapters.postgres_store.claim_store import PostgresClaimStore
from memory_adapters.postgres_store.connection import ConnectionSettings
from memory_adapters.postgres_store.embedded import EmbeddedLease, EmbeddedPostgres, lease_embedded
from memory_adapters.postgres_store.vectors import PostgresVectorStore

__all__ = [
    "ConnectionSettings",
    "EmbeddedLease",
    "EmbeddedPostgres",
    "HnswParameters",
    "PostgresClaimStore",
    "PostgresVectorStore",
    "lease_embedded",
]
