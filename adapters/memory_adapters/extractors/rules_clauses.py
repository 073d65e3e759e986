"""A user message cut into clauses the rules can match whole, with what the lead-in said.

"Actually, I moved to Berlin last year and I work at Acme." becomes two clauses, both marked
as a correction; "From now on, answer in German." becomes one clause marked persistent. The
date phrases of a clause are resolved against the request's reference time and zone, in the
direction the rule asks for: "in May" is last May in "I moved to Lisbon in May" and next May
in "I'm flying to Rome in May". Each clause also records whether its own verb is in the past
tense, for the rules whose shape does not say it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime

import attrs

from memory_adapters.extractors.rules_lexicon import ATTRIBUTES
from memory_adapters.extractors.rules_mood import is_sarcastic, is_statement
from memory_core.domain.dates import Prefer, ResolvedTime, TimeExpression, find_time_expressions

__all__ = ["SENTENCE_BREAK", "Clause", "MessageReading", "clauses_of"]

# Not after a title or "St." ("Please call me Dr. Okafor", "St. Mary's hospital"). The
# cheap look-behind goes first: the assertions are the same conjunction in any order, but
# the titles' seven are then tried only after a full stop, not at every character (issue 15).
SENTENCE_BREAK = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bProf\.)(?<!\bJr\.)"
    r"\s+|\n+|;\s*"
)
_SUBJECT = r"(?:(?:now|then|also|currently)\s+)?(?:I|I'm|I've|I'd|[Mm]y|[Oo]ur|[Ww]e|[Ww]e're)\b"
# A new first-person statement inside a sentence: "..., and I work at Acme", "..., and now
# I work as ...", "I'm vegan and allergic to soy" (a second state of the same subject).
_CLAUSE_BREAK = re.compile(
    rf",?\s+(?:and|but|so|because|plus)\s+(?={_SUBJECT})|,\s+(?={_SUBJECT})"
    rf"|\s+and\s+(?=(?:{'|'.join(sorted(ATTRIBUTES - {'into', 'between'}))})\b)"
)
# A household speaks for the user: "we live in Hackney", "my wife and I got married".
_PLURAL_SUBJECT = (
    (re.compile(r"^(?:my|our)\s+[\w'-]+\s+and\s+I\b", re.I), "we"),
    (re.compile(r"^we\s+are\b", re.I), "I am"),
    (re.compile(r"^we\s+were\b", re.I), "I was"),
    (re.compile(r"^we're\b", re.I), "I'm"),
    (re.compile(r"^we(?='(?:ve|d|ll)\b)", re.I), "I"),
    (re.compile(r"^we\b", re.I), "I"),
    (re.compile(r"^our\b", re.I), "my"),
)
# The first two letters every one of them starts with. Over ASCII a case-insensitive literal
# matches exactly what lower-casing makes equal, so ASCII text opening otherwise is left as it
# is without trying them (twice per clause, issue 15); other text tries them all.
_PLURAL_OPENINGS = frozenset({"my", "ou", "we"})
_ATTRIBUTE_ONLY = re.compile(rf"(?:{'|'.join(sorted(ATTRIBUTES - {'into', 'between'}))})\b", re.I)
_CORRECTION = {
    "actually",
    "correction",
    "update",
    "sorry",
    "oops",
    "no",
    "nope",
    "i meant",
    "i mean",
    "wait",
    "typo",
    "scratch that",
    "my bad",
    "i misspoke",
}
_PERSISTENT = {"from now on", "going forward", "in future", "in the future", "henceforth"}
# Words that open a statement without being part of it, longest first so that "by the way"
# is not read as "by". A short label before a colon ("Quick background:", "Fun fact:") is one.
_MARKERS = (
    "from now on", "going forward", "in the future", "in future", "henceforth", "actually",
    "correction", "i meant that", "i meant", "i mean that", "i mean", "update", "sorry",
    "oops", "nope", "no", "oh", "well", "okay", "ok", "also", "btw", "by the way", "fyi",
    "just so you know", "for the record", "hey", "hi", "hello", "so", "and", "but",
    "note that", "remember that", "remember", "wait", "typo", "scratch that", "my bad",
    "i misspoke", "quick background", "background", "for context", "context", "fun fact",
    "heads up", "random", "honestly", "to be honest", "tbh", "yeah", "yes", "yep", "sure",
    "alright", "right", "long story short", "hmm", "um", "uh", "ugh", "these days",
    "nowadays", "lately", "now", "currently", "in my free time", "in my spare time",
    "on weekends", "at the moment", "as you know", "for what it's worth", "like i said",
    "as i said", "anyway", "anyways", "ps", "p.s", "oh and", "also,", "plus",
)  # fmt: skip
_LEAD_IN = re.compile(
    r"(?P<marker>"
    + "|".join(
        # "No more crypto talk" is a request, not a "no," correcting what came before.
        r"no(?!\s+(?:more|longer)\b)" if m == "no" else re.escape(m)
        for m in sorted(set(_MARKERS), key=len, reverse=True)
    )
    + r"|[a-z][\w'-]*(?:\s+[\w'-]+){0,2}(?=\s*:\s))"
    r"\b\s*[,:;!.\-\u2013\u2014]*\s*",
    re.IGNORECASE,
)

# The clause's own verb in the past tense: "I moved", "I've lived", "I had just started",
# "my trip to Rome was cancelled". Regular verbs by their "-ed" ("need" and "feed" are not).
_PAST_VERB = (
    r"(?:was|were|had|did|got|went|came|left|met|began|became|took|made|bought|sold|quit"
    r"|won|lost|spent|paid|found|gave|saw|ran|wrote|built|grew|fell|been|gone|done|\w+(?<!e)ed)"
)
_PAST_TENSE = re.compile(
    r"(?:I|we)(?:'ve|'d|\s+have|\s+had)?\s+"
    r"(?:(?:\w+ly|just|already|also|still|even|ever|once|then|first|finally|never)\s+)*"
    rf"{_PAST_VERB}\b"
    rf"|(?:my|our|the)\s+(?:[\w'-]+\s+){{1,6}}?(?:was|were|had|got)\b",
    re.IGNORECASE,
)
# A preposition the date phrase did not take with it.
_DANGLING = re.compile(r"\s+(?:for|on|in|at|around|during|starting|from|by)$", re.IGNORECASE)
# "Call me Sam from now on": the persistence said at the end.
_TRAILING_PERSISTENT = re.compile(
    r"[\s,]+(?:from now on|going forward|in (?:the )?future|henceforth)$", re.IGNORECASE
)


@attrs.frozen
class _Part:
    """One clause of a sentence, as its sentence alone decides it (`MessageReading`)."""

    text: str
    corrected: bool
    persistent: bool
    past_tense: bool


@attrs.frozen
class MessageReading:
    """What reading one message has found so far, against its reference time and zone: the
    date phrases of each (text, direction), and the clauses of each sentence. Both are
    functions of the text alone, read once (issue 15): a sentence that is one clause is read
    for a leading date phrase as the sentence and again as its clause, the rules read the
    clause again (date scanning was a third of the extraction's CPU), and the pass that
    keeps a message no rule understood cuts its sentences into clauses once more (44 % of
    a conversation's extraction). Held by one message's passes only, so it grows with that
    message, never beyond."""

    reference: datetime
    timezone: str
    _dates: dict[tuple[str, Prefer], tuple[TimeExpression, ...]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )
    _sentences: dict[str, tuple[_Part, ...]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )

    def find(self, text: str, *, prefer: Prefer = "future") -> tuple[TimeExpression, ...]:
        """The date phrases of `text`, left to right, resolved the way `prefer` points."""
        found = self._dates.get((text, prefer))
        if found is None:
            found = find_time_expressions(
                text, reference=self.reference, timezone=self.timezone, prefer=prefer
            )
            self._dates[text, prefer] = found
        return found

    def parts(self, raw_sentence: str) -> tuple[_Part, ...]:
        """The clauses of one sentence of the message (none when it is no statement)."""
        parts = self._sentences.get(raw_sentence)
        if parts is None:
            parts = self._sentences[raw_sentence] = _parts_of(raw_sentence, self)
        return parts


@attrs.frozen(kw_only=True)
class Clause:
    """One clause of a user message, stripped of its lead-in words and final punctuation."""

    text: str
    message: str  # the whole message, for judging how its author writes (capitals or not)
    entry_id: str
    corrected: bool  # opened by "actually", "correction", "no, ..."
    persistent: bool  # opened by "from now on", "going forward", ...
    past_tense: bool  # "I moved ...", "my trip was cancelled": its own verb is in the past
    reference: datetime
    timezone: str
    reading: MessageReading = attrs.field(
        default=attrs.Factory(
            lambda self: MessageReading(self.reference, self.timezone), takes_self=True
        ),
        eq=False,
        repr=False,
    )

    @property
    def tense(self) -> Prefer:
        """Where the clause's own tense points a yearless "in May": back or forward."""
        return "past" if self.past_tense else "future"

    def times(self, *, prefer: Prefer) -> tuple[TimeExpression, ...]:
        """The clause's date phrases, left to right, a yearless month or a bare weekday
        resolved the way `prefer` points."""
        return self.reading.find(self.text, prefer=prefer)

    def split_time(
        self, start: int, end: int, *, prefer: Prefer
    ) -> tuple[str, ResolvedTime | None]:
        """The text of `[start, end)` without its first date phrase, and that phrase resolved.

        "Lisbon on Friday" -> ("Lisbon", Friday). A phrase at the very start leaves the text
        after it ("last year to Berlin" is rare but read the same way).
        """
        for expression in self.times(prefer=prefer):
            if expression.end <= start or expression.start >= end:
                continue
            before = self.text[start : max(start, expression.start)].strip()
            before = _DANGLING.sub("", before)  # "Tokyo for [March 3]"
            after = self.text[min(end, expression.end) : end].strip()
            return (before or after), expression.resolved
        return self.text[start:end].strip(), None

    def first_time(self, *, prefer: Prefer) -> ResolvedTime | None:
        times = self.times(prefer=prefer)
        return times[0].resolved if times else None


def _strip_lead_in(text: str) -> tuple[str, set[str]]:
    markers: set[str] = set()
    while (match := _LEAD_IN.match(text)) is not None and match.end() > 0:
        rest = text[match.end() :]
        if not rest.strip():
            break  # "No." alone: nothing follows the marker
        markers.add(" ".join(match["marker"].lower().split()).removesuffix(" that"))
        text = rest
    return text, markers


_I_AM_OPENING = re.compile(r"I(?:'m|\s+am)\b")
_OPENING_SUBJECT = re.compile(r",?\s*(?=(?:I|I'm|I've|I'll|[Mm]y|[Ww]e|[Ww]e're|[Oo]ur)\b)")


def _date_last(text: str, reading: MessageReading) -> str:
    """ "Next week I'm visiting my parents" -> "I'm visiting my parents next week": the rules
    read subject first; a date phrase in front would hide it."""
    times = reading.find(text)
    if not times or times[0].start != 0:
        return text
    rest = text[times[0].end :]
    subject = _OPENING_SUBJECT.match(rest)
    if subject is None:
        return text
    return f"{rest[subject.end() :].rstrip('.!?')} {times[0].text}"


def _singular(text: str) -> str:
    opening = text[:2]
    if opening.isascii() and opening.lower() not in _PLURAL_OPENINGS:
        return text  # no household subject: none of the seven patterns can match
    for pattern, replacement in _PLURAL_SUBJECT:
        text, done = pattern.subn(replacement, text, count=1)
        if done:
            return _singular(text) if replacement == "we" else text
    return text


def clauses_of(message: str, *, entry_id: str, reading: MessageReading) -> Iterator[Clause]:
    """The clauses of `message`, read against `reading`'s reference time and zone; `reading`
    holds what reading the message found so far (another pass over its text may have)."""
    normalised = message.replace("\u2019", "'").replace("\u2018", "'")
    if is_sarcastic(normalised):
        return
    for raw_sentence in SENTENCE_BREAK.split(normalised):
        for part in reading.parts(raw_sentence):
            yield Clause(
                text=part.text,
                message=normalised,
                entry_id=entry_id,
                corrected=part.corrected,
                persistent=part.persistent,
                past_tense=part.past_tense,
                reference=reading.reference,
                timezone=reading.timezone,
                reading=reading,
            )


def _parts_of(raw_sentence: str, reading: MessageReading) -> tuple[_Part, ...]:
    if not is_statement(raw_sentence):
        return ()
    sentence, markers = _strip_lead_in(raw_sentence.strip())
    sentence = _singular(_date_last(sentence, reading))
    parts: list[_Part] = []
    subject = ""
    for raw_part in _CLAUSE_BREAK.split(sentence):
        part, more = _strip_lead_in(raw_part.strip())
        part = _date_last(part.strip(), reading)
        text = _singular(part.rstrip(".!?,;: ").strip())
        if _ATTRIBUTE_ONLY.match(text) and subject:
            text = f"{subject} {text}"  # "I'm vegan and [I'm] allergic to soy"
        subject = "I'm" if _I_AM_OPENING.match(text) else ""
        text, trailing = _TRAILING_PERSISTENT.subn("", text)
        if not text:
            continue
        found = markers | more | ({"from now on"} if trailing else set())
        parts.append(
            _Part(
                text=text,
                corrected=bool(found & _CORRECTION),
                persistent=bool(found & _PERSISTENT),
                past_tense=_PAST_TENSE.match(text) is not None,
            )
        )
    return tuple(parts)
