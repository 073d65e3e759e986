"""The rule table indexed by opening character tries, for any clause, every rule that can
match it, in table order (issue 15): the first rule that answers is the one it was
(R-WRITE-1, R-DIR-1)."""

from __future__ import annotations

import re

import pytest
from extractor_support import CORPUS_MESSAGES, REFERENCE, ZONE
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.ingestion import messages
from memory_adapters.extractors.rules import RULES
from memory_adapters.extractors.rules_clauses import MessageReading, clauses_of
from memory_adapters.extractors.rules_openings import OpeningIndex, openings

INDEX = OpeningIndex(RULES)
# Openings that stress the index: both cases, digits, punctuation, and the non-ASCII
# letters case-insensitive matching pairs with ASCII ones (Kelvin sign, long s, dotless i).
OPENERS = ["I", "i", "M", "m", "t", "N", "p", "a", "w", "0", "'", " ", ",", "\u212a", "\u017f",
           "\u0131", "\u0130", "\u00e9", "\u4e2d"]  # fmt: skip


def _clause_texts() -> list[str]:
    reading = MessageReading(REFERENCE, ZONE)
    return sorted(
        {
            clause.text
            for text in [*CORPUS_MESSAGES, *messages(120)]
            for clause in clauses_of(text, entry_id="m1", reading=reading)
        }
    )


def _matching(rules: tuple[tuple[re.Pattern[str], object], ...], text: str) -> list[int]:
    return [id(rule) for rule in rules if rule[0].fullmatch(text)]


CLAUSES = _clause_texts()


def test_every_clause_of_the_corpus_meets_the_rules_it_met() -> None:
    for text in CLAUSES:
        for variant in {text, text[:1].swapcase() + text[1:], *(o + text[1:] for o in OPENERS)}:
            assert _matching(INDEX.for_text(variant), variant) == _matching(RULES, variant)


@settings(max_examples=400, deadline=None)
@given(
    opener=st.sampled_from(OPENERS) | st.characters(),
    tail=st.sampled_from(CLAUSES).map(lambda text: text[1:]) | st.text(max_size=20),
)
def test_any_opening_meets_the_rules_it_can_match(opener: str, tail: str) -> None:
    text = opener + tail
    assert _matching(INDEX.for_text(text), text) == _matching(RULES, text)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (re.compile(r"I(?:'m|\s+am)\s+(?P<obj>.+)", re.I), {"I", "i"}),
        (re.compile(r"(?:my|the|our)\s+x", re.I), {"m", "M", "t", "T", "o", "O"}),
        (re.compile(r"(?:please\s+)?always\s+.+", re.I), {"p", "P", "a", "A"}),
        (re.compile(r"(?=My)M.+"), {"M"}),
        (re.compile(r"[A-C]x|d?e"), {"A", "B", "C", "d", "e"}),
        (re.compile(r"(?P<obj>.+)"), None),  # any character
        (re.compile(r"\w+ing"), None),  # a category
        (re.compile(r"[^a]b"), None),  # a negated class
        (re.compile(r"(?i:a)b"), None),  # an inline flag
        (re.compile(r"\u00e9t\u00e9", re.I), None),  # case-insensitive beyond ASCII
    ],
)
def test_a_pattern_opens_with_what_its_regex_can_start_with(
    pattern: re.Pattern[str], expected: set[str] | None
) -> None:
    found = openings(pattern)
    assert (None if found is None else set(found)) == expected


def test_a_clause_opening_beyond_ascii_is_tried_against_every_rule() -> None:
    """`k` matches the Kelvin sign case-insensitively: the index must not rule it out."""
    assert re.compile("k", re.I).fullmatch("\u212a")
    assert INDEX.for_text("\u212aeep calm") == tuple(RULES)
    assert INDEX.for_text("") == tuple(RULES)
    assert len(INDEX.for_text("That was fun")) < len(RULES)
