"""A user message cut into clauses the rules can match whole, with what the lead-in said.

"Actually, I moved to Berlin last year and I work at Acme." becomes two clauses, both marked
as a correction; "From now on, answer in German." becomes one clause marked persistent. The
date phrases of each clause are resolved once, against the request's reference time and zone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime

import attrs

from memory_core.domain.dates import ResolvedTime, TimeExpression, find_time_expressions

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
    times: tuple[TimeExpression, ...]
    reference: datetime
    timezone: str

    def split_time(self, start: int, end: int) -> tuple[str, ResolvedTime | None]:
        """The text of `[start, end)` without its first date phrase, and that phrase resolved.

        "Lisbon on Friday" -> ("Lisbon", Friday). A phrase at the very start leaves the text
        after it ("last year to Berlin" is rare but read the same way).
        """
        for expression in self.times:
            if expression.end <= start or expression.start >= end:
                continue
            before = self.text[start : max(start, expression.start)].strip()
            before = _DANGLING.sub("", before)  # "Tokyo for [March 3]"
            after = self.text[min(end, expression.end) : end].strip()
            return (before or after), expression.resolved
        return self.text[start:end].strip(), None

    def first_time(self) -> ResolvedTime | None:
        return self.times[0].resolved if self.times else None


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
                times=find_time_expressions(text, reference=reference, timezone=timezone),
                reference=reference,
                timezone=timezone,
            )
