"""The verbatim extractor: each user turn stored as said, long turns split at sentences."""

from __future__ import annotations

import pytest
from extractor_support import MakeRequest, RunExtractor
from hypothesis import given
from hypothesis import strategies as st

from memory_adapters.extractors import VerbatimExtractor
from memory_adapters.extractors.verbatim import split_bounded
from memory_core.domain.claims import ClaimKind
from memory_core.ports.extraction import RejectionReason


def test_each_user_turn_becomes_one_episodic_atemporal_claim(
    make_request: MakeRequest, run: RunExtractor
) -> None:
    turns = [
        ("user", "  I moved to Berlin last year.  "),
        ("assistant", "Welcome to Berlin!"),
        ("user", "What's the weather like?"),
    ]
    result = run(VerbatimExtractor(), make_request(turns))
    summary = [
        (c.content, c.kind, c.importance, c.temporal.is_atemporal, c.source_entry_ids)
        for c in result.candidates
    ]
    assert summary == [
        ("I moved to Berlin last year.", ClaimKind.EPISODIC, 0.5, True, ("m1",)),
        ("What's the weather like?", ClaimKind.EPISODIC, 0.5, True, ("m3",)),
    ]


def test_long_turn_is_split_at_sentences_within_the_limit(
    make_request: MakeRequest, run: RunExtractor
) -> None:
    """Claims stay within 2,000 code points without losing text (never truncated)."""
    sentence = "The quick brown fox jumps over the lazy dog again and again. "
    text = (sentence * 80).strip()  # about 4,900 code points
    result = run(VerbatimExtractor(), make_request([("user", text)]))
    pieces = [c.content for c in result.candidates]
    assert len(pieces) == 3
    assert all(len(piece) <= 2000 for piece in pieces)
    assert all(piece.endswith("again.") for piece in pieces)  # whole sentences only
    assert " ".join(pieces) == text
    assert {c.source_entry_ids for c in result.candidates} == {("m1",)}


def test_sentence_longer_than_the_limit_splits_at_whitespace_then_anywhere() -> None:
    words = " ".join(["word"] * 50)  # 249 code points, no sentence end
    assert [len(p) for p in split_bounded(words, 100)] == [99, 99, 49]
    assert split_bounded("x" * 250, 100) == ["x" * 100, "x" * 100, "x" * 50]


def test_cjk_sentences_split_after_their_full_stops() -> None:
    text = "今日は晴れです。" * 30  # 240 code points
    pieces = split_bounded(text, 100)
    assert all(len(p) <= 100 and p.endswith("。") for p in pieces)
    assert "".join(p.replace(" ", "") for p in pieces) == text


def test_blank_and_short_texts() -> None:
    assert split_bounded("   ") == []
    assert split_bounded(" Hello. ") == ["Hello."]
    with pytest.raises(ValueError):
        split_bounded("Hello.", 0)


@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80),
        max_size=30,
    ),
    st.integers(min_value=10, max_value=200),
)
def test_split_pieces_are_bounded_and_keep_every_visible_character(
    parts: list[str], limit: int
) -> None:
    text = ". ".join(parts)
    pieces = split_bounded(text, limit)
    assert all(0 < len(piece) <= limit for piece in pieces)
    assert "".join("".join(p.split()) for p in pieces) == "".join(text.split())


def test_turn_with_a_secret_is_rejected_by_the_default_policy(
    make_request: MakeRequest, run: RunExtractor
) -> None:
    """R-PRIV-1: verbatim storage still passes the secret policy."""
    key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    result = run(VerbatimExtractor(), make_request([("user", f"My key is {key}.")]))
    assert result.candidates == ()
    assert result.rejected == (RejectionReason.SECRET,)
