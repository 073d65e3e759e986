"""The authoritative claim store on apsw SQLite: the SQL claim store's SQLite dialect, FTS5,
schema, migrations and connection (SPEC §3, §8). Driving a clear is `MemoryService`'s."""

from __future__ import annotations

from memory_adapters.sqlite_store.store import ApswClaimStore

__all__ = ["ApswClaimStore"]
