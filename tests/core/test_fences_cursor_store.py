"""The in-memory cursor store: monotone advance, rewind, validation (R-WRITE-3, R-WRITE-8)."""

from __future__ import annotations

import pytest

from memory_contracts.fake_cursor import InMemoryCursorStore
from memory_core.domain.errors import ValidationError
from memory_core.ports.cursor import CursorStore


def test_fake_satisfies_the_port() -> None:
    """R-ARCH-5: services get the port; the fake is one implementation of it."""
    assert isinstance(InMemoryCursorStore(), CursorStore)


def test_advance_is_monotone() -> None:
    """R-WRITE-8: a late or repeated commit never moves the cursor backwards."""
    cursors = InMemoryCursorStore()
    assert cursors.get("a1", "s1") == 0
    assert cursors.advance("a1", "s1", 6) == 6
    assert cursors.advance("a1", "s1", 4) == 6
    assert cursors.get("a1", "s1") == 6 and cursors.get("a1", "s2") == 0


def test_rewind_only_moves_back() -> None:
    """R-WRITE-3: invalidation rewinds to before the edited message, never forwards."""
    cursors = InMemoryCursorStore({("a1", "s1"): 6})
    assert cursors.rewind("a1", "s1", 2) == 2
    assert cursors.rewind("a1", "s1", 5) == 2
    assert cursors.rewind("a1", "s1", 0) == 0
    assert cursors.history == [("a1", "s1", 2), ("a1", "s1", 0)]


@pytest.mark.parametrize("value", [-1, 1.5, True, "3"])
def test_invalid_order_seq_is_refused(value: object) -> None:
    """R-DOM-4: a typed error naming the field."""
    cursors = InMemoryCursorStore()
    with pytest.raises(ValidationError) as raised:
        cursors.advance("a1", "s1", value)  # type: ignore[arg-type]
    assert raised.value.field == "order_seq"
