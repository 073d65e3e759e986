"""First-party cursor-store registration: "sqlite" — cursors in `<data_dir>/memory.sqlite3`.

Cursors live in the claim database so that a cursor never vouches for claims another file
lost. A host that keeps cursors with its own sessions registers its own store and names it
in `[plugins.cursor_store]`.
"""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.ports.cursor import CursorStore
from memory_plugins.builtin.claim_stores import DATABASE_FILENAME
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = ["SqliteCursorOptions", "agent_memory_register_cursor_stores"]


@attrs.frozen(kw_only=True)
class SqliteCursorOptions:
    busy_timeout_ms: int = 5_000
    loop_busy_timeout_ms: int = 250  # on the event loop (R-READ-1)


def _make_sqlite_cursors(context: FactoryContext) -> CursorStore:
    from memory_adapters.sqlite_store.cursors import SqliteCursorStore

    options = structure_options(context.options, SqliteCursorOptions, family="cursor_store")
    if context.domain_clock is None:
        raise ConfigError("plugins.cursor_store: needs the domain clock")
    context.data_dir.mkdir(parents=True, exist_ok=True)
    return SqliteCursorStore(
        context.data_dir / DATABASE_FILENAME,
        clock=context.domain_clock,
        busy_timeout_ms=options.busy_timeout_ms,
        loop_busy_timeout_ms=options.loop_busy_timeout_ms,
    )


@hookimpl
def agent_memory_register_cursor_stores(register: Register) -> None:
    register(
        "sqlite",
        _make_sqlite_cursors,
        description="Per-session extraction cursors in the SQLite claim database.",
    )
