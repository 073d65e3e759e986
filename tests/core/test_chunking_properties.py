"""Chunk invariants over arbitrary conversations (hypothesis; reference §7.1)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.domain.tokens import estimate_tokens
from memory_core.ports.tape import EntryKind, EntryRole, EntryStatus, TapeEntry
from memory_core.services.write.chunking import ChunkLimits, chunk_messages, is_extractable

# Latin, CJK (1.5 tokens each), whitespace, a combining mark and a joiner: all the cases the
# splitter treats differently.
LETTERS = [*"abcdefghijXYZ.我的名字한글カ", "\u0301", "\u200d", "🙂"]
PROSE = st.text(alphabet=st.sampled_from([*LETTERS, " ", "\n", "\t"]), max_size=40)
UNBROKEN = st.text(alphabet=st.sampled_from(LETTERS), min_size=1, max_size=40)
# Short messages, and long ones (a drawn piece repeated) that must be split: prose takes
# whitespace cuts, unbroken runs take hard cuts right at the limit.
CONTENT = st.one_of(
    PROSE,
    st.builds(lambda piece, times: piece * times, st.one_of(PROSE, UNBROKEN), st.integers(1, 60)),
)

ENTRY_SHAPES = st.tuples(
    st.sampled_from(list(EntryRole)),
    CONTENT,
    st.sampled_from([EntryStatus.SENT] * 6 + [EntryStatus.ERROR, EntryStatus.PENDING]),
    st.sampled_from([EntryKind.MESSAGE] * 6 + [EntryKind.COMPACTION]),
    st.integers(min_value=1, max_value=3),  # the order_seq gap: retractions leave holes
)
LIMITS = st.builds(
    ChunkLimits,
    max_tokens=st.integers(min_value=16, max_value=300),
    max_code_points=st.integers(min_value=64, max_value=900),
)


@st.composite
def conversations(draw: st.DrawFn) -> list[TapeEntry]:
    entries, seq = [], 0
    for index, (role, content, status, kind, gap) in enumerate(
        draw(st.lists(ENTRY_SHAPES, max_size=12))
    ):
        seq += gap
        entries.append(
            TapeEntry(
                id=f"m{index}",
                session_id="s",
                order_seq=seq,
                role=role,
                content=content,
                status=status,
                kind=kind,
            )
        )
    return entries


def _processed(entries: list[TapeEntry]) -> list[TapeEntry]:
    """The entries before the first pending one: the only ones a plan may touch."""
    processed = []
    for entry in entries:
        if entry.status is EntryStatus.PENDING:
            break
        processed.append(entry)
    return processed


@settings(max_examples=300, deadline=None)
@given(conversations(), LIMITS)
def test_no_chunk_exceeds_either_limit(entries: list[TapeEntry], limits: ChunkLimits) -> None:
    """R-WRITE-1: every chunk is ≤ the token estimate ceiling and ≤ the code-point ceiling."""
    for chunk in chunk_messages(entries, limits):
        assert estimate_tokens(chunk.text) <= limits.max_tokens
        assert len(chunk.text) <= limits.max_code_points
        assert chunk.parts


@settings(max_examples=300, deadline=None)
@given(conversations(), LIMITS)
def test_fragments_reproduce_every_extractable_message_exactly(
    entries: list[TapeEntry], limits: ChunkLimits
) -> None:
    """R-WRITE-1: concatenating a message's pieces gives its content; fragments are numbered
    1..k, only the last is final, and nothing excluded or after a pending message appears."""
    pieces: dict[str, list] = {}
    for chunk in chunk_messages(entries, limits):
        for part in chunk.parts:
            pieces.setdefault(part.entry_id, []).append(part)
    expected = {entry.id: entry for entry in _processed(entries) if is_extractable(entry)}

    assert set(pieces) == set(expected)
    for entry_id, parts in pieces.items():
        assert "".join(part.text for part in parts) == expected[entry_id].content
        assert [part.final for part in parts] == [False] * (len(parts) - 1) + [True]
        if len(parts) > 1:
            assert [part.fragment for part in parts] == list(range(1, len(parts) + 1))


@settings(max_examples=300, deadline=None)
@given(conversations(), LIMITS)
def test_cursor_commit_never_passes_a_message_finished_in_a_later_chunk(
    entries: list[TapeEntry], limits: ChunkLimits
) -> None:
    """R-WRITE-1, R-WRITE-8: after chunk i commits c, every extractable message at or before
    c is complete in chunks 0..i; commits never go backwards; the plan's last commit covers
    every processed entry, so nothing settled is left behind."""
    chunks = chunk_messages(entries, limits)
    final_chunk = {
        part.entry_id: index
        for index, chunk in enumerate(chunks)
        for part in chunk.parts
        if part.final
    }
    processed = _processed(entries)
    commits = [c.cursor_commit_order_seq for c in chunks if c.cursor_commit_order_seq is not None]

    for index, chunk in enumerate(chunks):
        commit = chunk.cursor_commit_order_seq
        if commit is None:
            continue
        assert commit <= chunk.covered_through_order_seq
        for entry in processed:
            if entry.order_seq <= commit and is_extractable(entry):
                assert final_chunk[entry.id] <= index
    assert commits == sorted(commits)
    if chunks:
        assert chunks[-1].cursor_commit_order_seq == max(entry.order_seq for entry in processed)
