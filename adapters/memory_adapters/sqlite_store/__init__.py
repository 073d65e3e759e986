"""The authoritative claim store on apsw SQLite: claims, FTS5, tombstones, directives, jobs,
migrations and startup repair (SPEC §3, §8)."""

from __future__ import annotations

from memory_adapters.sqlite_store.jobs import MAX_CLEAR_BATCH, resume_pending_clears, run_clear
from memory_adapters.sqlite_store.store import ApswClaimStore

__all__ = ["MAX_CLEAR_BATCH", "ApswClaimStore", "resume_pending_clears", "run_clear"]
