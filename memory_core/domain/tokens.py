"""Token estimation without a tokenizer: CJK-aware, deterministic, cheap.

`ceil(1.5 × CJK-like code points + other code points / 4)` (reference §4.7). Budgets are
enforced with this same estimate everywhere, so allocation and assembly agree.
"""

from __future__ import annotations

import math

__all__ = ["estimate_tokens", "is_cjk_like"]

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


def is_cjk_like(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def estimate_tokens(text: str) -> int:
    cjk = sum(1 for char in text if is_cjk_like(char))
    other = len(text) - cjk
    return math.ceil(1.5 * cjk + other / 4)
