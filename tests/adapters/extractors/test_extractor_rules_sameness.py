"""The rules extractor reads each message's date phrases once (issue 15) and extracts exactly
what it extracted before (former_extraction.py, verbatim): the same candidates, suggestions
and rejections, temporal metadata and source ids included, over the extraction corpus, the
ingestion benchmark's messages and texts built to move a date phrase, split a clause or
carry odd characters (R-TIME-1, R-TIME-2, R-DIR-1, R-PRIV-1)."""

from __future__ import annotations

from typing import Any

import pytest
from extractor_support import CORPUS_MESSAGES, MakeRequest, RunExtractor
from former_extraction import (
    FORMER_SENTENCE_BREAK,
    PATCHES,
    former_is_statement,
    former_singular,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.ingestion import messages
from memory_adapters.extractors import rules_clauses
from memory_adapters.extractors.rules import RulesExtractor
from memory_adapters.extractors.rules_clauses import SENTENCE_BREAK, _singular
from memory_adapters.extractors.rules_kept import KEPT_PREFIX
from memory_adapters.extractors.rules_mood import is_statement
from memory_core.domain.dates import TimeExpression
from memory_core.ports.extraction import ExtractionResult

ODD = [
    "Next week I'm visiting my parents in Porto.",
    "Next week we're visiting my parents, and on Friday I fly to Oslo.",
    "Last year we moved to Berlin and I started at Globex in March.",
    "In May I moved to Lisbon. In May I'm flying to Rome.",
    "Tomorrow my wife and I are going to Kyoto; next month I start at Initech.",
    "On Monday, I have a dentist appointment. On Monday I have a dentist appointment.",
    "I'm vegan and allergic to soy, and I work at Acme until March.",
    "Yesterday I quit my job. Yesterday I quit my job.",
    "Since 2023 I've lived in Quito.",
    "Actually, next spring I'm moving to Hobart.",
    "明天我要去东京。 I live in Zürich — since last year.",
    "I live in Ｂｅｒｌｉｎ since ｌａｓｔ ｙｅａｒ.",
    "I\u200b live in Paris.\x00 I work at Acme.",
    "My password is Tr0ub4dor&3 and I live in Oslo.",
    "From now on, call me Sam. Next Friday I'm flying to Accra.",
    "Should I move to Berlin? Next year I'm moving to Berlin.",
    "Oh great, I'm a billionaire next year.",
    "Please call me Dr. Okafor. I met Mr. Li and Mrs. Ng at St. Mary's. Prof. X, Jr. is here.",
    "I moved!  Really?\tYes.\n\nI live in Oslo; I work at Acme;no space. e.g. Dr.Who",
    "DR. Okafor. dr. okafor. ...  ?!? ;;; \u3002 I live in Oslo.\u2028Next line",
]
MESSAGES = CORPUS_MESSAGES + messages(60) + ODD


def _both(
    make_request: MakeRequest, run: RunExtractor, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[ExtractionResult, ExtractionResult]:
    request = make_request([("user", text) for text in texts])
    current = run(RulesExtractor(), request)
    with monkeypatch.context() as former:
        for owner, name, value in PATCHES:
            former.setattr(owner, name, value)
        before = run(RulesExtractor(), request)
    return current, before


@pytest.mark.parametrize("text", MESSAGES)
def test_each_message_extracts_what_it_did(
    text: str, make_request: MakeRequest, run: RunExtractor, monkeypatch: pytest.MonkeyPatch
) -> None:
    current, before = _both(make_request, run, [text], monkeypatch)
    assert current == before


def test_the_whole_corpus_in_one_request_extracts_what_it_did(
    make_request: MakeRequest, run: RunExtractor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Across messages too: merged repeats and slot hand-overs within one extraction."""
    current, before = _both(make_request, run, MESSAGES, monkeypatch)
    assert current.candidates
    assert current == before


@pytest.mark.parametrize(
    "text",
    [
        "Last week I finally sorted out the garage and the attic with my dad.",
        "I spent the whole of last weekend repainting the fence with my neighbour.",
        "My sister came over on Sunday. I baked a lemon tart for the two of us.",
    ],
)
def test_a_message_kept_as_said_is_read_once(
    text: str, make_request: MakeRequest, run: RunExtractor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No rule understands these, so the kept pass reads their sentences again: it shares
    the message's reading with the rules' pass, each sentence cut into clauses and each
    date phrase scanned once."""
    reads: list[tuple[str, str]] = []
    cuts: list[str] = []
    scan, cut = rules_clauses.find_time_expressions, rules_clauses._parts_of

    def scanned(text: str, **kwargs: Any) -> tuple[TimeExpression, ...]:
        reads.append((text, kwargs.get("prefer", "future")))
        return scan(text, **kwargs)

    def cut_once(sentence: str, reading: rules_clauses.MessageReading) -> Any:
        cuts.append(sentence)
        return cut(sentence, reading)

    monkeypatch.setattr(rules_clauses, "find_time_expressions", scanned)
    monkeypatch.setattr(rules_clauses, "_parts_of", cut_once)
    result = run(RulesExtractor(), make_request([("user", text)]))
    assert result.candidates
    assert all(c.content.startswith(f"{KEPT_PREFIX}: ") for c in result.candidates)
    assert reads and len(reads) == len(set(reads))
    assert cuts and len(cuts) == len(set(cuts))


_PIECES = st.sampled_from(
    [
        "Next week", "Last year", "In May", "On Friday", "Tomorrow", "since 2023", "until March",
        "I'm", "we're", "We", "my wife and I", "I", "moving to", "live in", "work at", "flying to",
        "started at", "Berlin", "Acme", "Porto", ",", ", and", " and", ".", "?", "!", ";", " ",
        "actually", "btw", "from now on", "call me Sam", "vegan", "allergic to soy", "\u200b",
        "é", "中", "\n",
    ]
)  # fmt: skip
_MESSAGES = st.lists(_PIECES, min_size=1, max_size=12).map(" ".join)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(_MESSAGES, min_size=1, max_size=3))
def test_generated_messages_extract_what_they_did(
    texts: list[str], make_request: MakeRequest, run: RunExtractor, monkeypatch: pytest.MonkeyPatch
) -> None:
    current, before = _both(make_request, run, texts, monkeypatch)
    assert current == before


_SPLIT_PIECES = st.sampled_from(
    ["Dr.", "Mr.", "Ms.", "Mrs.", "St.", "Prof.", "Jr.", "xDr.", "dr.", ".", "!", "?", ";",
     " ", "  ", "\t", "\n", "\u2028", "\u3000", "a", "I", "Okafor", "\u00e9"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(text=st.lists(_SPLIT_PIECES, max_size=16).map("".join) | st.text(max_size=30))
def test_sentences_are_cut_where_they_were(text: str) -> None:
    assert SENTENCE_BREAK.split(text) == FORMER_SENTENCE_BREAK.split(text)


_MOOD_PIECES = st.sampled_from(
    ["If", "if", "So,", "ok", "well", "what if", "let's say", "In my dream", "I", "we", "WE",
     "might", "may", "could", "wish", "would", "maybe", "Perhaps", "someday", "some day",
     "one day", "not sure if", "thinking about maybe", "Imagine", "say", "move", "Berlin",
     " ", "  ", ",", ".", "?", "\t", "\u0130", "\u0131", "\u212a", "mightily", "sayings",
     "MIGHT", "MaY", "Some\tDay", "SURE", "\u017fure", "someday.", "birthday", "Wouldn't"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(text=st.lists(_MOOD_PIECES, max_size=10).map(" ".join) | st.text(max_size=30))
def test_statements_are_told_from_hypotheticals_as_before(text: str) -> None:
    assert is_statement(text) is former_is_statement(text)


_SUBJECT_PIECES = st.sampled_from(
    ["my", "My", "MY", "our", "Our", "we", "We", "WE", "we're", "We've", "we'd", "we'll",
     "wife", "and", "I", "are", "were", "m", "w", "o", "y", "\u0131", "\u212a", "\uff57e",
     " ", "\t", "'", "-", "Berlin", "ours", "weird", "myself"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(text=st.lists(_SUBJECT_PIECES, max_size=8).map(" ".join) | st.text(max_size=12))
def test_a_household_subject_becomes_the_user_as_before(text: str) -> None:
    assert _singular(text) == former_singular(text)
    assert _singular(text.lstrip()) == former_singular(text.lstrip())
