"""A chunk's reference time: the last known `created_at` of its messages, never after now."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_core.ports.tape import EntryRole
from memory_core.services.write.chunking import Chunk, ChunkPart
from memory_core.services.write.ingestion.extraction import said_at_of

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _chunk(*created: datetime | None) -> Chunk:
    parts = tuple(
        ChunkPart(entry_id=f"m{n}", order_seq=n, role=EntryRole.USER, text="x", created_at=at)
        for n, at in enumerate(created, start=1)
    )
    return Chunk(parts=parts, covered_through_order_seq=len(parts), cursor_commit_order_seq=None)


def test_the_last_message_that_knows_when_it_was_said_dates_the_chunk() -> None:
    early, late = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 6, 1, tzinfo=UTC)
    assert said_at_of(_chunk(early, late, None), NOW) == late


def test_a_chunk_without_created_at_has_no_said_moment_of_its_own() -> None:
    """Said now: the caller dates it by the clock and orders it by message order, never by
    a clock read taken before extraction."""
    assert said_at_of(_chunk(None, None), NOW) is None


def test_a_created_at_after_now_is_clamped_to_now() -> None:
    assert said_at_of(_chunk(datetime(2031, 1, 1, tzinfo=UTC)), NOW) == NOW
