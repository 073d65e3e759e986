"""CJK-aware token estimation: `ceil(1.5 × CJK-like + other / 4)` (reference §4.7)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain import tokens
from memory_core.domain.tokens import (
    estimate_tokens,
    is_cjk_like,
    longest_prefix_within,
    token_weight,
    tokens_for_weight,
    weight_for_tokens,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("a", 1),
        ("abcd", 1),
        ("abcde", 2),
        ("abcdefgh", 2),
        ("hello world!", 3),
        ("猫", 2),
        ("猫猫", 3),
        ("猫猫猫猫", 6),
        ("猫abc", 3),  # 1.5 + 0.75 = 2.25
        ("ねこ", 3),
        ("カタカナ", 6),
        ("한국어", 5),  # 4.5
        ("😀", 1),  # one code point, not CJK
    ],
)
def test_estimate_follows_the_reference_formula(text: str, tokens: int) -> None:
    """R-READ-5: budgets use ceil(1.5 × CJK-like code points + other code points / 4)."""
    assert estimate_tokens(text) == tokens


def test_cjk_text_costs_six_times_ascii_per_code_point() -> None:
    """R-READ-5: 400 ASCII characters are 100 tokens; 400 Han characters are 600."""
    assert estimate_tokens("a" * 400) == 100
    assert estimate_tokens("漢" * 400) == 600


@pytest.mark.parametrize(
    "char",
    [
        "\u4e00",  # CJK unified ideograph
        "\u9fff",
        "\u3400",  # extension A
        "\U00020000",  # extension B
        "\U0002fa1f",  # compatibility supplement end
        "\uf900",  # compatibility ideograph
        "\u3041",  # hiragana
        "\u30ff",  # katakana
        "\uac00",  # hangul syllable
        "\u1100",  # hangul jamo
        "\u3131",  # hangul compatibility jamo
    ],
)
def test_cjk_like_ranges(char: str) -> None:
    """R-READ-5: ideographs (incl. compatibility), kana and Hangul count as CJK-like."""
    assert is_cjk_like(char)


@pytest.mark.parametrize("char", ["a", "é", "Ω", "😀", "\u3000", "\u3002", "\uff21", " "])
def test_other_characters_are_not_cjk_like(char: str) -> None:
    """R-READ-5: Latin, Greek, emoji, CJK punctuation and full-width Latin count as other."""
    assert not is_cjk_like(char)


@given(st.text())
def test_estimate_is_exact_against_an_integer_recomputation(text: str) -> None:
    """R-READ-5: no float drift — equals ceil((6 × cjk + other) / 4) in integers."""
    cjk = sum(1 for char in text if is_cjk_like(char))
    other = len(text) - cjk
    assert estimate_tokens(text) == -(-(6 * cjk + other) // 4)


@given(st.text(), st.text())
def test_estimate_of_a_concatenation_never_exceeds_the_parts(left: str, right: str) -> None:
    """R-READ-5: measuring pieces separately never under-counts the joined text."""
    joined = estimate_tokens(left + right)
    assert joined <= estimate_tokens(left) + estimate_tokens(right)
    assert joined >= max(estimate_tokens(left), estimate_tokens(right))
    assert joined >= math.ceil(len(left + right) / 4)


def _in_ranges(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in tokens._CJK_RANGES)


def _character_by_character(text: str) -> int:
    """The estimator as first written: one range test per code point."""
    cjk = sum(1 for char in text if _in_ranges(char))
    return math.ceil(1.5 * cjk + (len(text) - cjk) / 4)


def test_the_compiled_class_is_exactly_the_ranges() -> None:
    """R-READ-5: every code point up to the last range's end, surrogates included."""
    last = tokens._CJK_RANGES[-1][1] + 2
    assert [c for c in range(last) if is_cjk_like(chr(c)) != _in_ranges(chr(c))] == []


# Both sides of every range bound, surrogates, and ordinary text around them.
_EDGES = [chr(code) for low, high in tokens._CJK_RANGES for code in (low - 1, low, high, high + 1)]


_MIXED = st.lists(
    st.one_of(st.text(), st.sampled_from(_EDGES), st.text(alphabet="猫ねカ한 abc\n")),
    max_size=20,
).map("".join)


@given(_MIXED)
def test_the_fast_estimator_equals_the_character_by_character_one(text: str) -> None:
    """R-READ-5: the ASCII fast path and the one-regex CJK count change no estimate."""
    assert estimate_tokens(text) == _character_by_character(text)
    assert token_weight(text) == 6 * sum(map(_in_ranges, text)) + sum(
        not _in_ranges(char) for char in text
    )


@given(st.text(), st.text())
def test_weights_add_over_concatenation(left: str, right: str) -> None:
    """R-READ-5: what lets a caller add up pieces instead of re-measuring the whole."""
    assert token_weight(left + right) == token_weight(left) + token_weight(right)
    assert tokens_for_weight(token_weight(left + right)) == estimate_tokens(left + right)


@given(_MIXED, st.integers(min_value=-3, max_value=400))
def test_the_longest_prefix_within_a_weight_is_the_searched_one(text: str, weight: int) -> None:
    """R-READ-5: a budget cut keeps exactly the prefixes a search by `token_weight` keeps."""
    fitting = [k for k in range(len(text) + 1) if token_weight(text[:k]) <= weight]
    assert longest_prefix_within(text, weight) == max(fitting, default=0)


@given(st.integers(min_value=0, max_value=10_000))
def test_weight_for_tokens_is_the_largest_weight_of_that_estimate(tokens_: int) -> None:
    """R-READ-5: `weight <= weight_for_tokens(n)` exactly when the estimate is at most n."""
    top = weight_for_tokens(tokens_)
    assert tokens_for_weight(top) <= tokens_ < tokens_for_weight(top + 1)
