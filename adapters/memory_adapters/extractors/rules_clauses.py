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

from memory_core.domain.dates import Prefer, ResolvedTime, TimeExpression, find_time_expressions

__all__ = ["Clause", "clauses_of"]

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")
# A new first-person statement inside a sentence: "..., and I work at Acme".
_CLAUSE_BREAK = re.compile(
    r",?\s+(?:and|but|so|because|plus)\s+(?=(?:I|I'm|I've|I'd|[Mm]y)\b)|,\s+(?=(?:I|I'm|I've)\b)"
)
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
}
_PERSISTENT = {"from now on", "going forward", "in future", "in the future", "henceforth"}
_LEAD_IN = re.compile(
    r"(?P<marker>from now on|going forward|in (?:the )?future|henceforth|actually|correction"
    r"|i meant(?: that)?|i mean(?: that)?"
    r"|update|sorry|oops|nope|no|oh|well|okay|ok|also|btw|by the way|fyi|just so you know"
    r"|for the record|hey|hi|hello|so|and|but|note that|remember that|remember)"
    r"\b\s*[,:;!.-]*\s*",
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

    @property
    def tense(self) -> Prefer:
        """Where the clause's own tense points a yearless "in May": back or forward."""
        return "past" if self.past_tense else "future"

    def times(self, *, prefer: Prefer) -> tuple[TimeExpression, ...]:
        """The clause's date phrases, left to right, a yearless month or a bare weekday
        resolved the way `prefer` points."""
        return find_time_expressions(
            self.text, reference=self.reference, timezone=self.timezone, prefer=prefer
        )

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


def clauses_of(
    message: str, *, entry_id: str, reference: datetime, timezone: str
) -> Iterator[Clause]:
    normalised = message.replace("\u2019", "'").replace("\u2018", "'")
    for raw_sentence in _SENTENCE_BREAK.split(normalised):
        sentence, markers = _strip_lead_in(raw_sentence.strip())
        for raw_part in _CLAUSE_BREAK.split(sentence):
            part, more = _strip_lead_in(raw_part.strip())
            text = part.strip().rstrip(".!?,;: ").strip()
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
