"""Rules for trips, plans, events and cancellations: temporal kinds `plan` and `event`.

Plans and events need a date phrase and take the resolver's interval and confidence: without
one, "I'm going to try that" and "I went to check" are conversation, not memories. A month or
weekday without a year or week is the next one for a plan and the last one for an event
("I visited Japan in May", said in November, is this May, not next).

A cancelled trip yields two candidates: the cancellation as an event, and a plan in the
trip's slot (`user.trip.<destination>`) whose window ends at the reference time. The decision
step supersedes the open plan by that slot, and its replacement reads "previously planned"
from then on — a plan whose date passes never proves it happened (R-TIME-2).
"""

from __future__ import annotations

import re

from memory_adapters.extractors.phrasing import clean_object, slot_key, third_person, when_phrase
from memory_adapters.extractors.rules_clauses import Clause
from memory_adapters.extractors.rules_common import (
    DETERMINER,
    TRIP,
    Finding,
    before_reference,
    claim,
    proper,
)
from memory_core.domain.claims import ClaimKind
from memory_core.domain.temporal import TemporalKind

__all__ = ["cancelled", "event", "plan", "trip"]


def cancelled(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    # "My trip was cancelled in May" looks back; "I'm not flying to Rome in May", forward.
    destination = clean_object(clause.split_time(*m.span("obj"), prefer=clause.tense)[0])
    if not proper(destination, clause):
        return None
    place = third_person(destination)
    resolved = clause.first_time(prefer=clause.tense)  # "... was cancelled yesterday"
    if resolved is not None:
        text = f"The user cancelled the trip to {place} {when_phrase(resolved)}"
        when = resolved.to_metadata(TemporalKind.EVENT)
    else:
        text = f"The user cancelled the trip to {place}"
        when = before_reference(TemporalKind.EVENT, clause)
    return [
        claim(text, clause, kind=ClaimKind.EPISODIC, temporal=when),
        claim(
            f"The user had planned a trip to {place} but cancelled it",
            clause,
            importance=0.6,
            slot=slot_key(TRIP, destination),
            temporal=before_reference(TemporalKind.PLAN, clause),
        ),
    ]


def trip(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    destination, resolved = clause.split_time(*m.span("obj"), prefer="future")
    destination = clean_object(destination)
    if resolved is None or not proper(destination, clause):
        return None
    return [
        claim(
            f"The user plans a trip to {third_person(destination)} {when_phrase(resolved)}",
            clause,
            importance=0.6,
            slot=slot_key(TRIP, destination),
            temporal=resolved.to_metadata(TemporalKind.PLAN),
        )
    ]


def plan(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    action, resolved = clause.split_time(*m.span("obj"), prefer="future")
    action = clean_object(action)
    has = bool(m.groupdict().get("have"))  # "I have a meeting on Friday"
    if resolved is None or not action:
        return None
    if not has and (DETERMINER.match(action) or re.match(r"the\b", action, re.I)):
        return None  # "I'm going to the gym": a place, not a verb phrase
    lead = "has" if has else "plans to"
    return [
        claim(
            f"The user {lead} {third_person(action)} {when_phrase(resolved)}",
            clause,
            importance=0.6,
            temporal=resolved.to_metadata(TemporalKind.PLAN),
        )
    ]


def event(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    what, resolved = clause.split_time(*m.span("obj"), prefer="past")  # it happened
    what = clean_object(what)
    if resolved is None or not what:
        return None
    verb = " ".join(m["verb"].lower().split())
    return [
        claim(
            f"The user {verb} {third_person(what)} {when_phrase(resolved)}",
            clause,
            kind=ClaimKind.EPISODIC,
            temporal=resolved.to_metadata(TemporalKind.EVENT),
        )
    ]
