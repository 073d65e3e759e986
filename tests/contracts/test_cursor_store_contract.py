"""The CursorStore contract against the SQLite store and the in-memory fake (R-ARCH-5)."""

from __future__ import annotations

from pathlib import Path

from memory_adapters.sqlite_store.cursors import SqliteCursorStore
from memory_contracts.cursor_store import CursorStoreContract
from memory_contracts.fake_cursor import InMemoryCursorStore
from memory_contracts.fakes import ManualClock

pytest_plugins = ["memory_contracts.pytest_plugin"]


class TestSqliteCursorStore(CursorStoreContract):
    def make_cursor_store(self, tmp_path: Path) -> SqliteCursorStore:
        return SqliteCursorStore(tmp_path / "memory.sqlite3", clock=ManualClock())


class TestInMemoryCursorStore(CursorStoreContract):
    capabilities = frozenset()  # a dict: nothing survives a restart

    def make_cursor_store(self, tmp_path: Path) -> InMemoryCursorStore:
        return InMemoryCursorStore()
