"""Message-aligned extraction chunks: rendering, packing, fragments, exclusions (reference §7.1)."""

from __future__ import annotations

import pytest

from memory_core.domain.errors import ValidationError
from memory_core.domain.tokens import estimate_tokens
from memory_core.ports.tape import EntryKind, EntryRole, EntryStatus, TapeEntry
from memory_core.services.write.chunking import ChunkLimits, chunk_messages
from memory_core.settings import MemorySettings

SMALL = ChunkLimits(max_tokens=100, max_code_points=120)
DEFAULT = ChunkLimits.from_settings(MemorySettings())


def _entry(
    seq: int,
    content: str,
    role: EntryRole = EntryRole.USER,
    *,
    status: EntryStatus = EntryStatus.SENT,
    kind: EntryKind = EntryKind.MESSAGE,
) -> TapeEntry:
    return TapeEntry(
        id=f"m{seq}",
        session_id="s",
        order_seq=seq,
        role=role,
        content=content,
        status=status,
        kind=kind,
    )


def test_messages_are_rendered_with_role_labels_and_packed_into_one_chunk() -> None:
    """R-WRITE-1: each message is rendered `User: …` / `Assistant: …` in order."""
    chunks = chunk_messages(
        [_entry(1, "I live in Lisbon."), _entry(2, "Noted.", EntryRole.ASSISTANT)], DEFAULT
    )

    assert len(chunks) == 1
    assert chunks[0].text == "User: I live in Lisbon.\n\nAssistant: Noted."
    assert chunks[0].source_entry_ids == ("m1", "m2")
    assert chunks[0].covered_through_order_seq == 2
    assert chunks[0].cursor_commit_order_seq == 2
    assert chunks[0].fragment_count == 0


def test_default_limits_come_from_settings() -> None:
    """R-WRITE-1: defaults are the settings' 4,000 tokens and 12,000 code points."""
    settings = MemorySettings()
    limits = ChunkLimits.from_settings(settings)
    assert (limits.max_tokens, limits.max_code_points) == (4_000, 12_000)
    # 5,000 ASCII code points = 1,250 tokens each: two fit one chunk, the third does not.
    entries = [_entry(seq, "x" * 5_000) for seq in (1, 2, 3)]
    chunks = chunk_messages(entries, limits)
    assert [chunk.source_entry_ids for chunk in chunks] == [("m1", "m2"), ("m3",)]


def test_a_message_that_does_not_fit_starts_a_new_chunk_whole() -> None:
    """R-WRITE-1: packing is message-aligned: a message that fits alone is never split."""
    entries = [_entry(1, "a" * 60), _entry(2, "b" * 60), _entry(3, "c" * 10)]
    chunks = chunk_messages(entries, SMALL)

    assert [chunk.source_entry_ids for chunk in chunks] == [("m1",), ("m2", "m3")]
    assert [chunk.cursor_commit_order_seq for chunk in chunks] == [1, 3]
    assert all(part.fragment is None for chunk in chunks for part in chunk.parts)


def test_an_oversized_message_is_split_into_numbered_fragments() -> None:
    """R-WRITE-1: `User [fragment N]: …` pieces; concatenated they are the message exactly."""
    content = " ".join(f"word{index:03d}" for index in range(60))
    chunks = chunk_messages([_entry(1, content), _entry(2, "short")], SMALL)

    parts = [part for chunk in chunks for part in chunk.parts if part.entry_id == "m1"]
    assert len(parts) > 1
    assert [part.fragment for part in parts] == list(range(1, len(parts) + 1))
    assert "".join(part.text for part in parts) == content
    assert chunks[0].text.startswith("User [fragment 1]: word000")
    assert [part.final for part in parts] == [False] * (len(parts) - 1) + [True]


def test_a_partially_processed_message_never_advances_the_cursor() -> None:
    """R-WRITE-1, R-WRITE-8: chunks holding only non-final fragments commit no cursor; the
    chunk with the final fragment commits that message and takes the next one too."""
    # 19 code points of "User [fragment N]: " leave 101 per fragment: 101 + 101 + 101 + 7.
    chunks = chunk_messages([_entry(1, "done"), _entry(2, "y" * 310), _entry(3, "tail")], SMALL)

    assert [chunk.source_entry_ids for chunk in chunks] == [
        ("m1",),
        ("m2",),
        ("m2",),
        ("m2",),
        ("m2", "m3"),
    ]
    assert [chunk.cursor_commit_order_seq for chunk in chunks] == [1, None, None, None, 3]
    assert [chunk.covered_through_order_seq for chunk in chunks] == [1, 2, 2, 2, 3]
    assert chunks[-1].text == "User [fragment 4]: yyyyyyy\n\nUser: tail"


def test_fragments_prefer_a_whitespace_boundary() -> None:
    """R-WRITE-1: an oversized message is cut after whitespace when one is near the limit."""
    content = ("alpha beta gamma delta " * 20).strip()
    chunks = chunk_messages([_entry(1, content)], SMALL)

    pieces = [part.text for chunk in chunks for part in chunk.parts]
    assert "".join(pieces) == content
    assert all(piece.endswith(" ") for piece in pieces[:-1])


def test_a_hard_cut_does_not_detach_a_combining_mark() -> None:
    """R-WRITE-1: without whitespace the cut is by code point, never before a combining mark."""
    content = "e\u0301" * 200  # "é" as base letter + combining acute accent
    chunks = chunk_messages([_entry(1, content)], SMALL)

    pieces = [part.text for chunk in chunks for part in chunk.parts]
    assert "".join(pieces) == content
    assert all(piece.startswith("e") for piece in pieces)


def test_cjk_text_is_limited_by_estimated_tokens_before_code_points() -> None:
    """R-WRITE-1: 1.5 tokens per CJK character: the token ceiling binds first."""
    limits = ChunkLimits(max_tokens=100, max_code_points=1_000)
    chunks = chunk_messages([_entry(1, "我" * 300)], limits)

    assert len(chunks) > 1
    assert all(estimate_tokens(chunk.text) <= 100 for chunk in chunks)
    assert "".join(part.text for chunk in chunks for part in chunk.parts) == "我" * 300


def test_compaction_markers_failed_system_tool_and_blank_messages_are_not_extracted() -> None:
    """R-WRITE-1, R-WRITE-3: excluded entries add no text, but the cursor passes over them."""
    entries = [
        _entry(1, "summary so far", EntryRole.SYSTEM, kind=EntryKind.COMPACTION),
        _entry(2, "I like tea."),
        _entry(3, "partial answer", EntryRole.ASSISTANT, status=EntryStatus.ERROR),
        _entry(4, "tool output", EntryRole.TOOL),
        _entry(5, "   "),
        _entry(6, "system prompt", EntryRole.SYSTEM),
    ]
    (chunk,) = chunk_messages(entries, DEFAULT)

    assert chunk.text == "User: I like tea."
    assert chunk.source_entry_ids == ("m2",)
    assert chunk.covered_through_order_seq == 6
    assert chunk.cursor_commit_order_seq == 6


def test_leading_excluded_entries_are_committed_by_the_first_chunk_without_passing_a_split() -> (
    None
):
    """R-WRITE-1: a failed message before an oversized one is passed; the split one is not."""
    entries = [_entry(1, "oops", status=EntryStatus.ERROR), _entry(2, "z" * 400)]
    chunks = chunk_messages(entries, SMALL)

    assert chunks[0].cursor_commit_order_seq == 1
    assert chunks[-1].cursor_commit_order_seq == 2


def test_nothing_extractable_yields_no_chunk() -> None:
    """R-WRITE-1: a range of only excluded entries needs no extraction call."""
    entries = [_entry(1, "x", status=EntryStatus.ERROR), _entry(2, "y", kind=EntryKind.COMPACTION)]
    assert chunk_messages(entries, DEFAULT) == ()
    assert chunk_messages([], DEFAULT) == ()


def test_a_pending_message_stops_the_plan_so_the_cursor_cannot_skip_it() -> None:
    """R-WRITE-1: a still-streaming message and everything after it wait for a later pass."""
    entries = [
        _entry(1, "hello"),
        _entry(2, "streaming…", EntryRole.ASSISTANT, status=EntryStatus.PENDING),
        _entry(3, "later"),
    ]
    (chunk,) = chunk_messages(entries, DEFAULT)

    assert chunk.source_entry_ids == ("m1",)
    assert chunk.cursor_commit_order_seq == 1


def test_entries_out_of_order_or_from_two_sessions_are_rejected() -> None:
    """R-DOM-4: the plan needs one session's entries in order_seq order; the error names it."""
    with pytest.raises(ValidationError) as excinfo:
        chunk_messages([_entry(2, "b"), _entry(1, "a")], DEFAULT)
    assert excinfo.value.field == "entries"
    other = TapeEntry(id="o", session_id="other", order_seq=3, role="user", content="c")
    with pytest.raises(ValidationError):
        chunk_messages([_entry(1, "a"), other], DEFAULT)


@pytest.mark.parametrize(
    ("tokens", "points", "field"), [(15, 100, "max_tokens"), (100, 63, "max_code_points")]
)
def test_limits_too_small_for_a_fragment_are_rejected(tokens: int, points: int, field: str) -> None:
    """R-DOM-4: limits that cannot hold a label and one character are refused by name."""
    with pytest.raises(ValidationError) as excinfo:
        ChunkLimits(max_tokens=tokens, max_code_points=points)
    assert excinfo.value.field == field
