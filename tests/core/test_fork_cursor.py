"""Fork cursor mapping and edit rewinds (R-WRITE-3, reference §7.9)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.errors import ValidationError
from memory_core.ports.tape import EntryKind, EntryRole, EntryStatus, TapeEntry
from memory_core.services.write.fork_cursor import (
    fork_selection,
    is_cloned_by_fork,
    map_fork_cursor,
    rewind_cursor,
)


def _entry(
    seq: int,
    *,
    status: EntryStatus = EntryStatus.SENT,
    kind: EntryKind = EntryKind.MESSAGE,
) -> TapeEntry:
    role = EntryRole.USER if seq % 2 else EntryRole.ASSISTANT
    return TapeEntry(
        id=f"m{seq}",
        session_id="src",
        order_seq=seq,
        role=role,
        content=f"message {seq}",
        status=status,
        kind=kind,
    )


SOURCE = [
    _entry(1),
    _entry(2, status=EntryStatus.ERROR),  # a failed answer
    _entry(3),
    _entry(4, kind=EntryKind.COMPACTION),  # a summary marker
    _entry(6),  # 5 was retracted
    _entry(7),
    _entry(8, status=EntryStatus.PENDING),
]


def test_a_fork_clones_only_sent_messages_up_to_the_target() -> None:
    """R-WRITE-3: failed and pending messages and compaction markers stay behind."""
    assert [entry.order_seq for entry in fork_selection(SOURCE, 7)] == [1, 3, 6, 7]
    assert [entry.order_seq for entry in fork_selection(SOURCE, 6)] == [1, 3, 6]
    assert fork_selection(SOURCE, 0) == ()
    assert not is_cloned_by_fork(SOURCE[1]) and not is_cloned_by_fork(SOURCE[3])


@pytest.mark.parametrize(
    ("source_cursor", "clone_cursor"),
    [(0, 0), (1, 1), (2, 1), (3, 2), (4, 2), (5, 2), (6, 3), (7, 4), (99, 4)],
)
def test_the_clone_cursor_is_the_clone_position_of_the_last_extracted_source_message(
    source_cursor: int, clone_cursor: int
) -> None:
    """R-WRITE-3: only the source's extracted prefix maps onto the dense clone numbering; a
    failed message or compaction marker right at the cursor takes no clone position."""
    assert map_fork_cursor(SOURCE, source_cursor, 7) == clone_cursor


def test_a_cursor_past_the_fork_point_covers_the_whole_clone() -> None:
    """R-WRITE-3: forking from an already extracted message leaves no tail to extract."""
    assert map_fork_cursor(SOURCE, 7, 3) == 2


@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(EntryStatus)),
            st.sampled_from(list(EntryKind)),
            st.integers(1, 3),
        ),
        max_size=20,
    ),
    st.integers(0, 70),
    st.integers(0, 70),
)
def test_the_clone_tail_above_the_cursor_is_exactly_the_unextracted_source_tail(
    shapes: list[tuple[EntryStatus, EntryKind, int]], cursor: int, up_to: int
) -> None:
    """R-WRITE-3: later turns extract the unprocessed cloned tail once — no processed
    message is replayed and no unprocessed one is skipped."""
    entries, seq = [], 0
    for status, kind, gap in shapes:
        seq += gap
        entries.append(_entry(seq, status=status, kind=kind))
    cloned = fork_selection(entries, up_to)
    clone_cursor = map_fork_cursor(entries, cursor, up_to)

    # Clone order_seq i is cloned[i - 1]; the clone's cursor splits it at the source cursor.
    assert all(entry.order_seq <= cursor for entry in cloned[:clone_cursor])
    assert all(entry.order_seq > cursor for entry in cloned[clone_cursor:])


@pytest.mark.parametrize(
    ("cursor", "invalidate_from", "expected"), [(9, 5, 4), (3, 5, 3), (5, 5, 4), (0, 1, 0)]
)
def test_an_edit_rewinds_the_cursor_to_just_before_the_edited_message(
    cursor: int, invalidate_from: int, expected: int
) -> None:
    """R-WRITE-3: invalidate_from_order_seq rewinds to min(cursor, order_seq − 1)."""
    assert rewind_cursor(cursor, invalidate_from) == expected


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: rewind_cursor(-1, 3), "cursor"),
        (lambda: rewind_cursor(3, 0), "invalidate_from_order_seq"),
        (lambda: map_fork_cursor(SOURCE, -1, 3), "source_cursor"),
        (lambda: fork_selection(SOURCE, -2), "up_to_order_seq"),
        (lambda: fork_selection(list(reversed(SOURCE)), 9), "entries"),
    ],
)
def test_invalid_cursors_and_unordered_entries_are_rejected_by_name(call, field: str) -> None:
    """R-DOM-4: typed errors name the offending argument."""
    with pytest.raises(ValidationError) as excinfo:
        call()
    assert excinfo.value.field == field
