"""First-party claim-store registration: "sqlite" — the apsw store in `<data_dir>/memory.sqlite3`.

Registered through the `agent_memory` entry-point group like any third-party plugin
(R-ARCH-3); chosen by name from `[plugins.claim_store]` (R-ARCH-5). Opening runs the
migrations and, unless turned off, the startup repair (R-TIME-4, R-SCOPE-4); resuming
pending clear jobs is async and belongs to the composition root
(`memory_adapters.sqlite_store.resume_pending_clears`).
"""

from __future__ import annotations

from typing import Literal

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.ports.claims import ClaimStore
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = ["DATABASE_FILENAME", "SqliteStoreOptions", "agent_memory_register_claim_stores"]

DATABASE_FILENAME = "memory.sqlite3"


@attrs.frozen(kw_only=True)
class SqliteStoreOptions:
    """`[plugins.claim_store.options]` of the "sqlite" store."""

    busy_timeout_ms: int = 5_000  # how long a writer waits for another process's lock
    # ...and on the event loop, where the wait would hold every turn (R-READ-1).
    loop_busy_timeout_ms: int = 250
    # FULL: a committed forget survives power loss; NORMAL: only a process crash.
    synchronous: Literal["FULL", "NORMAL", "EXTRA"] = "FULL"
    repair_on_open: bool = True
    # MiB of the database file read through a memory map (0: plain reads); see
    # `memory_adapters.sqlite_store.ApswClaimStore`.
    mmap_mib: int = 1024


def _make_sqlite_store(context: FactoryContext) -> ClaimStore:
    from memory_adapters.sqlite_store import ApswClaimStore

    options = structure_options(context.options, SqliteStoreOptions, family="claim_store")
    if context.secret_policy is None or context.domain_clock is None:
        raise ConfigError("plugins.claim_store: needs the secret policy and the domain clock")
    context.data_dir.mkdir(parents=True, exist_ok=True)
    store = ApswClaimStore(
        context.data_dir / DATABASE_FILENAME,
        secret_policy=context.secret_policy,
        clock=context.domain_clock,
        busy_timeout_ms=options.busy_timeout_ms,
        loop_busy_timeout_ms=options.loop_busy_timeout_ms,
        synchronous=options.synchronous,
        mmap_mib=options.mmap_mib,
    )
    if options.repair_on_open:
        try:
            store.repair(now=context.domain_clock.now())
        except BaseException:
            store.close()
            raise
    return store


@hookimpl
def agent_memory_register_claim_stores(register: Register) -> None:
    register(
        "sqlite",
        _make_sqlite_store,
        description="apsw SQLite: claims, FTS5 trigram search, tombstones, directives, clear jobs.",
        capabilities=("fts", "directives", "clear-jobs", "forensic-delete"),
    )
