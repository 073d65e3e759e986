"""The SQL claim store, written once against a small `Dialect` (R-ARCH-4, SPEC §3).

`ApswClaimStore` (sqlite_store) and `PostgresClaimStore` (postgres_store) are this store on
two dialects: statement building, row mapping (one `ClaimRow`), claims, lifecycle, reads,
tombstones, audit, directives, clear jobs, repair and bookkeeping live here, and the rules
they execute live in `memory_core.storage`. A store package keeps only what truly differs:
its DDL, migrations and triggers, connection setup, lexical search (FTS5 vs substring
BM25), locking and its dialect object. This is the one package the adapters-independent
contract lets two adapters share.
"""

from __future__ import annotations

from memory_adapters.sql_claims.session import Connection, Cursor, Dialect, RepairProbe, Session
from memory_adapters.sql_claims.store import SqlClaimStore

__all__ = ["Connection", "Cursor", "Dialect", "RepairProbe", "Session", "SqlClaimStore"]
