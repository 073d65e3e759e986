"""Token estimation without a tokenizer: CJK-aware, deterministic, cheap.

`ceil(1.5 × CJK-like code points + other code points / 4)` (reference §4.7). Budgets are
enforced with this same estimate everywhere, so allocation and assembly agree.

In integers that is `ceil(weight / 4)` with `weight = 6 × CJK-like + other`: the weight of a
concatenation is the sum of its parts' weights, so a caller assembling text piece by piece can
add weights and test `weight <= 4 × budget` instead of re-measuring the whole text each time.
The estimate runs on every turn over hundreds of claims: ASCII text (most of it) is answered
from its length, anything else by one regular-expression pass over its CJK runs.
"""

from __future__ import annotations

import re

__all__ = [
    "estimate_tokens",
    "is_cjk_like",
    "longest_prefix_within",
    "token_weight",
    "tokens_for_weight",
    "weight_for_tokens",
]

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x2FA1F),  # CJK extensions B..F and compatibility supplement
)
_CJK_RUN = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES) + "]+")
_CJK_EXTRA = 5  # a CJK-like code point weighs 6, and `len` already counted it once


def is_cjk_like(char: str) -> bool:
    # One compiled character class instead of eight range tests in Python: callers test
    # every character of a text.
    return _CJK_RUN.fullmatch(char) is not None


def token_weight(text: str) -> int:
    """`6 × CJK-like code points + other code points`: four times the estimate, unrounded."""
    if text.isascii():
        return len(text)
    return len(text) + _CJK_EXTRA * sum(map(len, _CJK_RUN.findall(text)))


def tokens_for_weight(weight: int) -> int:
    """The estimate of a text whose `token_weight` is `weight`."""
    return -(-weight // 4)


def weight_for_tokens(tokens: int) -> int:
    """The largest weight whose estimate is at most `tokens` (`tokens_for_weight`'s inverse)."""
    return 4 * tokens


def longest_prefix_within(text: str, weight: int) -> int:
    """The largest `k` with `token_weight(text[:k]) <= weight`, in one pass over the CJK runs:
    a budget cut searching prefixes re-measured each one from its start."""
    if weight <= 0:
        return 0
    if text.isascii():
        return min(len(text), weight)
    heavy = 1 + _CJK_EXTRA
    spent = at = 0  # spent is token_weight(text[:at])
    for run in _CJK_RUN.finditer(text):
        start, end = run.span()
        if spent + start - at >= weight:  # the cut falls among the plain code points
            return at + weight - spent
        spent, at = spent + start - at, start
        if spent + heavy * (end - start) > weight:  # ...or inside this run
            return at + (weight - spent) // heavy
        spent, at = spent + heavy * (end - start), end
    return min(len(text), at + weight - spent)


def estimate_tokens(text: str) -> int:
    return tokens_for_weight(token_weight(text))
