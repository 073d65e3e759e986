"""Ingestion cursors across forks and edits (R-WRITE-3, reference §7.9).

A fork clones the source session's settled messages up to a chosen message into a new
session, renumbered densely 1..n. `fork_selection` is the one definition of which messages
a fork clones — tape adapters use it to build the clone and `map_fork_cursor` uses it to
number them — so the clone's cursor always lands on the clone of the last source message
the source had already extracted: later turns extract the unprocessed tail once, without
replaying the processed prefix. A cursor is an order_seq; 0 means "nothing extracted".
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from memory_core.domain.errors import ValidationError
from memory_core.ports.tape import EntryKind, EntryStatus, TapeEntry

__all__ = ["fork_selection", "is_cloned_by_fork", "map_fork_cursor", "rewind_cursor"]


def is_cloned_by_fork(entry: TapeEntry) -> bool:
    """Sent messages only: failed or still-pending messages and compaction markers stay behind."""
    return entry.kind is EntryKind.MESSAGE and entry.status is EntryStatus.SENT


def fork_selection(entries: Iterable[TapeEntry], up_to_order_seq: int) -> tuple[TapeEntry, ...]:
    """The source entries a fork up to `up_to_order_seq` clones, in order; the i-th (from 1)
    becomes the clone's order_seq i. `entries` is the source's effective tape."""
    _require_cursor("up_to_order_seq", up_to_order_seq)
    ordered = _ordered(entries)
    return tuple(
        entry
        for entry in ordered
        if entry.order_seq <= up_to_order_seq and is_cloned_by_fork(entry)
    )


def map_fork_cursor(
    source_entries: Iterable[TapeEntry], source_cursor: int, up_to_order_seq: int
) -> int:
    """The clone's cursor: the clone position of the last cloned source message at or before
    `source_cursor` (0 when there is none). Failed messages and compaction markers are not
    cloned, so they take no position; the source's unprocessed tail maps above the cursor."""
    _require_cursor("source_cursor", source_cursor)
    cloned = fork_selection(source_entries, up_to_order_seq)
    return sum(1 for entry in cloned if entry.order_seq <= source_cursor)


def rewind_cursor(cursor: int, invalidate_from_order_seq: int) -> int:
    """The cursor after messages from `invalidate_from_order_seq` on were edited, deleted or
    retried: min(cursor, order_seq − 1), so they are extracted again (R-WRITE-3)."""
    _require_cursor("cursor", cursor)
    if (
        not isinstance(invalidate_from_order_seq, int)
        or isinstance(invalidate_from_order_seq, bool)
        or invalidate_from_order_seq < 1
    ):
        raise ValidationError("invalidate_from_order_seq", "must be an integer >= 1")
    return min(cursor, invalidate_from_order_seq - 1)


def _require_cursor(field: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(field, "must be an integer >= 0")


def _ordered(entries: Iterable[TapeEntry]) -> Sequence[TapeEntry]:
    ordered = tuple(entries)
    for before, after in itertools.pairwise(ordered):
        if after.order_seq <= before.order_seq:
            raise ValidationError("entries", "order_seq must be strictly increasing")
        if after.session_id != before.session_id:
            raise ValidationError("entries", "must all belong to one session")
    return ordered
