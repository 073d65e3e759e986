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
from memory_core.ports.cursor import CursorPosition, CursorStore

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
        assert store.get("a1", "s1") == 0
        assert store.position("a1", "s1") == CursorPosition()

    def test_advance_never_moves_backwards(self, tmp_path: Path) -> None:
        """R-WRITE-8: a late or repeated commit cannot rewind the cursor."""
        store = self.make_cursor_store(tmp_path)
        assert store.advance("a1", "s1", 5) == 5
        assert store.advance("a1", "s1", 3) == 5
        assert store.get("a1", "s1") == 5
        assert store.get("a1", "s2") == 0

    def test_each_agent_has_its_own_cursor_on_one_session(self, tmp_path: Path) -> None:
        """R-WRITE-1: a second agent on the same conversation extracts it for itself."""
        store = self.make_cursor_store(tmp_path)
        store.advance("a1", "s1", 7)
        assert store.get("a2", "s1") == 0
        store.rewind("a2", "s1", 0)
        assert store.get("a1", "s1") == 7

    def test_fragment_progress_is_part_of_the_monotone_position(self, tmp_path: Path) -> None:
        """R-WRITE-1: a long message advances by fragment; a lower offset or an earlier
        message never moves it back, and completing the message clears the offset."""
        store = self.make_cursor_store(tmp_path)
        assert store.advance("a1", "s1", 4, fragment_offset=300) == 4
        store.advance("a1", "s1", 4, fragment_offset=100)
        store.advance("a1", "s1", 3, fragment_offset=900)
        assert store.position("a1", "s1") == CursorPosition(order_seq=4, fragment_offset=300)
        store.advance("a1", "s1", 5)
        assert store.position("a1", "s1") == CursorPosition(order_seq=5)

    def test_rewind_never_moves_forwards(self, tmp_path: Path) -> None:
        """R-WRITE-3: an edit at order_seq N re-extracts from N, fragment progress included."""
        store = self.make_cursor_store(tmp_path)
        store.advance("a1", "s1", 9, fragment_offset=50)
        assert store.rewind("a1", "s1", 4) == 4
        assert store.position("a1", "s1") == CursorPosition(order_seq=4)
        assert store.rewind("a1", "s1", 7) == 4
        assert store.rewind("a1", "unknown", 3) == 0

    def test_failures_count_at_one_position(self, tmp_path: Path) -> None:
        """R-WRITE-6: attempts at one chunk are counted, and any move starts a new count."""
        store = self.make_cursor_store(tmp_path)
        assert [store.record_failure("a1", "s1") for _ in range(3)] == [1, 2, 3]
        assert store.record_failure("a2", "s1") == 1
        store.advance("a1", "s1", 2)
        assert store.record_failure("a1", "s1") == 1
        store.rewind("a1", "s1", 0)
        assert store.record_failure("a1", "s1") == 1

    def test_bad_values_are_refused_naming_the_field(self, tmp_path: Path) -> None:
        store = self.make_cursor_store(tmp_path)
        for bad in (-1, 1.5, True, "3"):
            with pytest.raises(ValidationError, match="order_seq"):
                store.advance("a1", "s1", bad)  # type: ignore[arg-type]
            with pytest.raises(ValidationError, match="fragment_offset"):
                store.advance("a1", "s1", 1, fragment_offset=bad)  # type: ignore[arg-type]
        assert store.get("a1", "s1") == 0

    @requires_capability("persistence")
    def test_cursors_survive_a_reopen(self, tmp_path: Path) -> None:
        """R-WRITE-8: a restart resumes where extraction stopped, mid-message included."""
        require_declared(self, "persistence")
        first = self.make_cursor_store(tmp_path)
        first.advance("a1", "s1", 12, fragment_offset=4_000)
        first.record_failure("a1", "s1")
        closer = getattr(first, "close", None)
        if callable(closer):
            closer()
        again = self.make_cursor_store(tmp_path)
        assert again.position("a1", "s1") == CursorPosition(order_seq=12, fragment_offset=4_000)
        assert again.record_failure("a1", "s1") == 2
