"""The date-phrase patterns skip a text that holds none of their words and, in one that
does, are tried only at the words a match can start at (issue 15); the phrases found, with
their periods, are exactly those of scanning every pattern over the whole text, ASCII or not
(R-TIME-1, R-TIME-3)."""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.domain.date_phrases import match_phrases
from memory_core.domain.date_phrases import scan as date_phrases

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
    "since on May 5, in in 3 days, (on Friday) x-on Monday, 12-2024-01-02, 2024-01-0233",
    "on\tMay\n5th,\x1c2025 and by\x1fJune; February 30th, or Feb 29 2027 then March 1",
    "mayday Mondays todays the5th of may 32 may 31st 2024_ 5_ of June _2024 in 1000 years",
    "see 9999-99-99",  # its only digit is a 9
]


def _every_match(text: str) -> list[tuple[re.Match[str], object]]:
    """The former scan: every pattern's `finditer` over the whole text."""
    return [
        (m, handler)
        for pattern, handler, *_ in date_phrases._PATTERNS
        for m in pattern.finditer(text)
    ]


def _spans(found: list[tuple[re.Match[str], object]]) -> list[tuple[object, ...]]:
    return [(m.re.pattern, m.span(), m.groupdict(), handler) for m, handler in found]


@pytest.mark.parametrize("prefer", ["past", "future", "nearest"])
def test_gated_scan_finds_what_every_pattern_finds(
    prefer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = [match_phrases(text, TODAY, prefer) for text in TEXTS]  # type: ignore[arg-type]
    monkeypatch.setattr(date_phrases, "_matches", _every_match)
    full = [match_phrases(text, TODAY, prefer) for text in TEXTS]  # type: ignore[arg-type]
    assert gated == full
    assert sum(map(len, full)) >= 25  # the corpus exercises the patterns


@pytest.mark.parametrize("text", TEXTS)
def test_each_pattern_matches_where_its_full_scan_does(text: str) -> None:
    assert _spans(date_phrases._matches(text)) == _spans(_every_match(text))


# Date words, prefixes, numbers, look-alike near misses and what IGNORECASE or `\\d` read
# as ASCII (a long s, a Kelvin sign, fullwidth and Arabic-Indic digits), joined by ASCII and
# Unicode spaces, punctuation or nothing: texts in which the anchored and the full scan
# could part.
_WORDS = sorted(
    {
        *date_phrases._OPENERS - {date_phrases._DIGIT, date_phrases._ANY},
        *date_phrases._UNIT_WORDS,
        "of", "now", "ago", "st", "nd", "th", "x", "mayday", "ons", "the5th", "ago_", "_",
        "1", "5", "12", "31", "32", "123", "1999", "2024", "2199", "2300", "05", "5th", "3rd",
        "2024-02-03", "1999-12-31", "2024-13-45",
        "\u017fince", "\u212aday", "\u0130n", "ＭＡＹ", "Ｍay", "３", "٣", "2０24",
        "日本", "é", "maé",
    }
)  # fmt: skip
_GLUE = st.sampled_from(
    [" ", " ", " ", "  ", "\t", "\n", ", ", ",", "-", "(", ")", ". ", "", "\u00a0", "\u3000"]
)
_TOKENS = st.tuples(
    st.sampled_from(_WORDS).map(lambda word: word.upper() if word == "may" else word), _GLUE
)
_TEXT = st.lists(_TOKENS, max_size=40).map(lambda parts: "".join(w + g for w, g in parts))


@settings(max_examples=500, deadline=None)
@given(text=_TEXT, prefer=st.sampled_from(["past", "future", "nearest"]))
def test_anchored_scan_equals_the_full_scan_on_date_heavy_text(text: str, prefer: str) -> None:
    assert _spans(date_phrases._matches(text)) == _spans(_every_match(text))
    with pytest.MonkeyPatch.context() as patch:
        expected = match_phrases(text, TODAY, prefer)  # type: ignore[arg-type]
        patch.setattr(date_phrases, "_matches", _every_match)
        assert expected == match_phrases(text, TODAY, prefer)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200) | st.text(st.characters(max_codepoint=0x7F), max_size=300))
def test_anchored_scan_equals_the_full_scan_on_any_text(text: str) -> None:
    assert _spans(date_phrases._matches(text)) == _spans(_every_match(text))


def test_only_the_patterns_whose_words_a_text_holds_are_tried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tried: list[str] = []

    class Spy:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def match(self, text: str, start: int) -> re.Match[str] | None:
            tried.append(self.pattern.pattern)
            return self.pattern.match(text, start)

    spied = tuple((Spy(p), h, needs, opens) for p, h, needs, opens in date_phrases._PATTERNS)
    monkeypatch.setattr(date_phrases, "_PATTERNS", spied)
    assert date_phrases._matches("Noted, thanks for the daily update on the project.") == []
    assert tried == []
    date_phrases._matches("Tom 7 plays chess")
    digits = [p.pattern.pattern for p, _, needs, _ in spied if date_phrases._DIGIT in needs]
    assert set(tried) == set(digits)
