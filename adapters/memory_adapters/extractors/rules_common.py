"""What every rule shares: the finding type, confidences, slot names, temporal builders.

Temporal choices (R-TIME-1/2), and why:
- a state with a date phrase starts at that period ("I moved to Berlin last year": from the
  start of 2025, precision year, the resolver's confidence); without one it is dated from the
  message's reference time with precision `unknown` and confidence 0.5 — true as of then, its
  start unknown, so recall treats it as a low-confidence reading that fails open (R-TIME-3);
- something said in the past tense without a date ("I cancelled my trip") ends no later than
  the reference time: precision `unknown`, but confidence 0.9 that it is not later than that;
- a month or weekday without a year or week follows the clause: the last one for events and
  for states told in the past tense ("I moved to Lisbon in May", said in November, is this
  May), the next one for plans and for the present tense ("I work at Acme until March").
Factual confidence is separate (R-DOM-2): 0.8 for what users state about themselves, 0.9 when
they correct themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory_adapters.extractors.phrasing import sentence
from memory_adapters.extractors.rules_clauses import Clause
from memory_core.domain.dates import ResolvedTime, TimeRole
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata
from memory_core.ports.extraction import CandidateClaim, DirectiveSuggestion

__all__ = [
    "AGE",
    "BEFORE_REFERENCE_CONFIDENCE",
    "CORRECTED_CONFIDENCE",
    "DETERMINER",
    "DIET",
    "EMPLOYER",
    "HOME",
    "MOVE",
    "NAME",
    "OBSERVED_TEMPORAL_CONFIDENCE",
    "OCCUPATION",
    "ORIGIN",
    "STATED_CONFIDENCE",
    "TRIP",
    "UNRESOLVED_WHEN",
    "Finding",
    "Handler",
    "before_reference",
    "claim",
    "observed_state",
    "proper",
    "state",
    "undated_plan",
    "writes_lowercase",
]

Finding = CandidateClaim | DirectiveSuggestion
# A handler may decline (None) so the next rule gets the clause.
Handler = Callable[[re.Match[str], Clause], "list[Finding] | None"]

STATED_CONFIDENCE = 0.8
CORRECTED_CONFIDENCE = 0.9
OBSERVED_TEMPORAL_CONFIDENCE = 0.5
BEFORE_REFERENCE_CONFIDENCE = 0.9

HOME = "user.home_city"
EMPLOYER = "user.employer"
NAME = "user.preferred_name"
DIET = "user.diet"
TRIP = "user.trip"  # + destination key: one slot per trip
MOVE = "user.move"  # + destination key: a planned move
AGE = "user.age"
OCCUPATION = "user.occupation"
ORIGIN = "user.origin"

DETERMINER = re.compile(r"(?:a|an|my|our|your|his|her|their|this|that|some|any)\b", re.I)
_NOT_A_PLACE = re.compile(r"(?:home|night|nights|weekends?|the moment|times|least|first)\b", re.I)


# When a plan is said with a date phrase the resolver does not read ("on the 3rd", "next
# spring", "for Christmas"), it is still a plan: its time is kept in words, unresolved.
UNRESOLVED_WHEN = re.compile(
    r"\b(?:on\s+the\s+\d{1,2}(?:st|nd|rd|th)|(?:this|next|in\s+the)\s+(?:weekend|spring"
    r"|summer|autumn|fall|winter|holidays)|(?:for|at|over)\s+(?:christmas|easter|new\s+year"
    r"|the\s+holidays|thanksgiving)|later\s+this\s+(?:year|month))\b",
    re.I,
)


def writes_lowercase(clause: Clause) -> bool:
    """Someone who never capitalises ("i live in paris") still names places and people."""
    return not any(char.isupper() for char in clause.message)


def proper(text: str, clause: Clause) -> bool:
    """A name-like object ("Berlin", "the Netherlands", "Acme"), not "a small flat"."""
    if not text or DETERMINER.match(text) or _NOT_A_PLACE.match(text):
        return False
    bare = re.sub(r"^the\s+", "", text, flags=re.I)
    return bool(bare) and (bare[0].isupper() or bare[0].isdigit() or writes_lowercase(clause))


def observed_state(clause: Clause) -> TemporalMetadata:
    return TemporalMetadata(
        kind=TemporalKind.STATE,
        interval=Interval(valid_from=clause.reference),
        precision=Precision.UNKNOWN,
        timezone=clause.timezone,
        confidence=OBSERVED_TEMPORAL_CONFIDENCE,
    )


def state(resolved: ResolvedTime | None, clause: Clause) -> TemporalMetadata:
    """A state starting with the named period ("since 2023", "last year"), or ending with it
    ("until March"); with no date phrase, the observed state."""
    if resolved is None:
        return observed_state(clause)
    interval = resolved.interval
    if resolved.role is TimeRole.UNTIL:
        bounds = Interval(valid_until=interval.valid_until)
    else:
        bounds = Interval(valid_from=interval.valid_from)
    return TemporalMetadata(
        kind=TemporalKind.STATE,
        interval=bounds,
        precision=resolved.precision,
        timezone=resolved.timezone,
        confidence=resolved.confidence,
    )


def before_reference(kind: TemporalKind, clause: Clause) -> TemporalMetadata:
    return TemporalMetadata(
        kind=kind,
        interval=Interval(valid_until=clause.reference),
        precision=Precision.UNKNOWN,
        timezone=clause.timezone,
        confidence=BEFORE_REFERENCE_CONFIDENCE,
    )


def claim(content: str, clause: Clause, **fields: object) -> CandidateClaim:
    """A candidate phrased as one sentence, sourced to the clause's entry."""
    confidence = CORRECTED_CONFIDENCE if clause.corrected else STATED_CONFIDENCE
    return CandidateClaim(
        content=sentence(content),
        confidence=confidence,
        source_entry_ids=(clause.entry_id,),
        **fields,  # type: ignore[arg-type]
    )


def undated_plan(clause: Clause) -> TemporalMetadata:
    """A plan said without a date we can resolve ("for Christmas", "this weekend"): planned
    as of the message, its time unknown — still a plan, never something that happened."""
    return TemporalMetadata(
        kind=TemporalKind.PLAN,
        interval=Interval(valid_from=clause.reference),
        precision=Precision.UNKNOWN,
        timezone=clause.timezone,
        confidence=0.5,
    )
