"""`CursorStoreContract`: what `memory_core.ports.cursor.CursorStore` promises, as tests.

Subclass it and implement `make_cursor_store(tmp_path)`, which must reopen the same cursors
when called again with the same `tmp_path`. A store that keeps nothing across a restart
declares `capabilities = frozenset()` (with `memory_contracts.pytest_plugin` enabled).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from memory_core.domain.errors import ValidationError
from memory_core.ports.cursor import CursorStore

from .pytest_plugin import require_declared, requires_capability

__all__ = ["CursorStoreContract"]


class CursorStoreContract:
    capabilities: ClassVar[frozenset[str]] = frozenset({"persistence"})

    def make_cursor_store(self, tmp_path: Path) -> CursorStore:
        raise NotImplementedError

    def test_an_unknown_session_starts_at_zero(self, tmp_path: Path) -> None:
        """R-WRITE-8: nothing extracted yet."""
        store = self.make_cursor_store(tmp_path)
        assert isinstance(store, CursorStore)
        assert store.get("s1") == 0

    def test_advance_never_moves_backwards(self, tmp_path: Path) -> None:
        """R-WRITE-8: a late or repeated commit cannot rewind the cursor."""
        store = self.make_cursor_store(tmp_path)
        assert store.advance("s1", 5) == 5
        assert store.advance("s1", 3) == 5
        assert store.get("s1") == 5
        assert store.get("s2") == 0

    def test_rewind_never_moves_forwards(self, tmp_path: Path) -> None:
        """R-WRITE-3: an edit at order_seq N re-extracts from N."""
        store = self.make_cursor_store(tmp_path)
        store.advance("s1", 9)
        assert store.rewind("s1", 4) == 4
        assert store.rewind("s1", 7) == 4
        assert store.rewind("unknown", 3) == 0

    def test_bad_order_seq_is_refused_naming_the_field(self, tmp_path: Path) -> None:
        store = self.make_cursor_store(tmp_path)
        for bad in (-1, 1.5, True, "3"):
            with pytest.raises(ValidationError, match="order_seq"):
                store.advance("s1", bad)  # type: ignore[arg-type]
        assert store.get("s1") == 0

    @requires_capability("persistence")
    def test_cursors_survive_a_reopen(self, tmp_path: Path) -> None:
        """R-WRITE-8: a restart resumes where extraction stopped, not from the start."""
        require_declared(self, "persistence")
        first = self.make_cursor_store(tmp_path)
        first.advance("s1", 12)
        closer = getattr(first, "close", None)
        if callable(closer):
            closer()
        assert self.make_cursor_store(tmp_path).get("s1") == 12
