"""The rules extractor's clause reading as it was before it was made cheaper (issue 15), kept
verbatim as the reference the sameness tests compare the current one with. `PATCHES` puts
the former functions in place of the current ones. Test support only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime

from memory_adapters.extractors import rules, rules_clauses, rules_kept, rules_mood
from memory_adapters.extractors.rules_clauses import (
    _ATTRIBUTE_ONLY,
    _CLAUSE_BREAK,
    _CORRECTION,
    _OPENING_SUBJECT,
    _PAST_TENSE,
    _PERSISTENT,
    _PLURAL_SUBJECT,
    _TRAILING_PERSISTENT,
    Clause,
    _strip_lead_in,
    is_sarcastic,
)
from memory_core.domain.dates import Prefer, TimeExpression, find_time_expressions

__all__ = [
    "FORMER_SENTENCE_BREAK",
    "PATCHES",
    "former_clauses_of",
    "former_is_statement",
    "former_singular",
    "former_times",
]

# `rules_clauses.SENTENCE_BREAK` as it was.
# Not after a title or "St." ("Please call me Dr. Okafor", "St. Mary's hospital").
FORMER_SENTENCE_BREAK = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bProf\.)(?<!\bJr\.)"
    r"(?<=[.!?])\s+|\n+|;\s*"
)

_QUESTION_OPENING = rules_mood._QUESTION_OPENING

# `rules_mood._HYPOTHETICAL` and `is_statement` as they were.
_HYPOTHETICAL = re.compile(
    r"^(?:(?:so|and|but|ok|okay|well|hmm),?\s+)?(?:if|suppose|supposing|imagine|assuming"
    r"|what\s+if|let's\s+say|let\s+us\s+say|say|pretend|hypothetically|in\s+(?:a|my|the)\s+"
    r"(?:story|game|novel|dream|script))\b"
    r"|\b(?:I|we)\s+(?:might|may|could|wish)\b|\bwould\s+(?:I|we)\b"
    r"|\b(?:maybe|perhaps|someday|some\s+day|one\s+day|not\s+sure\s+if|thinking\s+about"
    r"\s+maybe)\b",
    re.IGNORECASE,
)


def former_is_statement(sentence: str) -> bool:
    """`sentence` states something: no question, no hypothetical."""
    text = sentence.strip()
    if text.endswith("?") or _QUESTION_OPENING.match(text):
        return False
    return _HYPOTHETICAL.search(text) is None


def former_singular(text: str) -> str:
    """`rules_clauses._singular` as it was."""
    for pattern, replacement in _PLURAL_SUBJECT:
        text, done = pattern.subn(replacement, text, count=1)
        if done:
            return former_singular(text) if replacement == "we" else text
    return text


def former_times(self: Clause, *, prefer: Prefer) -> tuple[TimeExpression, ...]:
    """`Clause.times` as it was."""
    return find_time_expressions(
        self.text, reference=self.reference, timezone=self.timezone, prefer=prefer
    )


def _date_last(text: str, reference: datetime, timezone: str) -> str:
    """ "Next week I'm visiting my parents" -> "I'm visiting my parents next week": the rules
    read subject first; a date phrase in front would hide it."""
    times = find_time_expressions(text, reference=reference, timezone=timezone)
    if not times or times[0].start != 0:
        return text
    rest = text[times[0].end :]
    subject = _OPENING_SUBJECT.match(rest)
    if subject is None:
        return text
    return f"{rest[subject.end() :].rstrip('.!?')} {times[0].text}"


def former_clauses_of(
    message: str, *, entry_id: str, reference: datetime, timezone: str
) -> Iterator[Clause]:
    """`rules_clauses.clauses_of` as it was."""
    normalised = message.replace("\u2019", "'").replace("\u2018", "'")
    if is_sarcastic(normalised):
        return
    for raw_sentence in FORMER_SENTENCE_BREAK.split(normalised):
        if not former_is_statement(raw_sentence):
            continue
        sentence, markers = _strip_lead_in(raw_sentence.strip())
        sentence = former_singular(_date_last(sentence, reference, timezone))
        subject = ""
        for raw_part in _CLAUSE_BREAK.split(sentence):
            part, more = _strip_lead_in(raw_part.strip())
            part = _date_last(part.strip(), reference, timezone)
            text = former_singular(part.rstrip(".!?,;: ").strip())
            if _ATTRIBUTE_ONLY.match(text) and subject:
                text = f"{subject} {text}"  # "I'm vegan and [I'm] allergic to soy"
            subject = "I'm" if re.match(r"I(?:'m|\s+am)\b", text) else ""
            text, trailing = _TRAILING_PERSISTENT.subn("", text)
            if not text:
                continue
            found = markers | more | ({"from now on"} if trailing else set())
            yield Clause(
                text=text,
                message=normalised,
                entry_id=entry_id,
                corrected=bool(found & _CORRECTION),
                persistent=bool(found & _PERSISTENT),
                past_tense=_PAST_TENSE.match(text) is not None,
                reference=reference,
                timezone=timezone,
            )


def _former_clauses_at(
    message: str, *, entry_id: str, reading: rules_clauses.MessageReading
) -> Iterator[Clause]:
    """`former_clauses_of` called as `clauses_of` is now (the date readings' reference and
    zone; it reads every date phrase afresh, as it did)."""
    return former_clauses_of(
        message, entry_id=entry_id, reference=reading.reference, timezone=reading.timezone
    )


PATCHES = (
    (rules_clauses.Clause, "times", former_times),
    (rules, "clauses_of", _former_clauses_at),
    (rules_kept, "SENTENCE_BREAK", FORMER_SENTENCE_BREAK),
    (rules_kept, "is_statement", former_is_statement),
)
