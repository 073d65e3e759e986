"""The date-phrase patterns skip an ASCII text that holds none of their words (issue 15);
the phrases found, with their periods, are exactly those of scanning every pattern
(R-TIME-1, R-TIME-3)."""

from __future__ import annotations

import re
from datetime import date

import pytest

from memory_core.domain import date_phrases
from memory_core.domain.date_phrases import match_phrases

TODAY = date(2026, 3, 10)
TEXTS = [
    "I really enjoy kayaking with my brother Tom 7 on weekends.",
    "Noted.",
    "We met yesterday and again TONIGHT.",
    "next Friday, then this month and last YEAR",
    "in 3 weeks, two days ago, a month from now",
    "on the 5th of May, March 9th 2024, since June, from March 5 until March 9",
    "may 5 people join? In May 2025 we moved; born in 1987; see 2024-02-03.",
    "sept 12 or Sep 3rd, oct, by December 2030",
    "Montag, el lunes, le 5 mai",  # no English vocabulary: nothing
    "in ３ weeks on Ｆriday",  # fullwidth: not ASCII, every pattern runs
    "next \u212aday",  # the Kelvin sign reads as "k" under IGNORECASE
    "ｍay 2025 and 2024－02－03",
]


def _every_pattern(text: str) -> list[tuple[re.Pattern[str], object]]:
    return [(pattern, handler) for pattern, handler, _ in date_phrases._PATTERNS]


@pytest.mark.parametrize("prefer", ["past", "future", "nearest"])
def test_gated_scan_finds_what_every_pattern_finds(
    prefer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = [match_phrases(text, TODAY, prefer) for text in TEXTS]  # type: ignore[arg-type]
    monkeypatch.setattr(date_phrases, "_scanned", _every_pattern)
    full = [match_phrases(text, TODAY, prefer) for text in TEXTS]  # type: ignore[arg-type]
    assert gated == full
    assert sum(map(len, full)) >= 15  # the corpus exercises the patterns


def test_a_text_without_date_words_is_scanned_by_the_digit_patterns_alone() -> None:
    assert date_phrases._scanned("Noted.") == []
    digits = {id(p) for p, _, needs in date_phrases._PATTERNS if needs == date_phrases._DIGITS}
    assert {id(p) for p, _ in date_phrases._scanned("Tom 7 plays chess")} == digits
