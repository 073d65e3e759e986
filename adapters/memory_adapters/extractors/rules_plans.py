"""Rules for trips, plans, events and cancellations: temporal kinds `plan` and `event`.

Plans and events need a date phrase and take the resolver's interval and confidence: without
one, "I'm going to try that" and "I went to check" are conversation, not memories — unless
the intent is stated ("I'm planning to repaint the kitchen", "I've booked a flight to
Reykjavik"): then a plan as of the message, its time unknown. A month or
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
    MOVE,
    TRIP,
    UNRESOLVED_WHEN,
    Finding,
    before_reference,
    claim,
    proper,
    undated_plan,
)
from memory_adapters.extractors.rules_profile import habit_slot
from memory_core.domain.claims import ClaimKind
from memory_core.domain.temporal import TemporalKind

__all__ = ["appointment", "called_off", "cancelled", "event", "plan", "trip"]

_MOVING = re.compile(r"\b(?:mov(?:e|ing)|relocat(?:e|ing))\b", re.I)
_INTENT = re.compile(r"\b(?:plan|planning|intend|intending|booked|book|booking|got|have)\b", re.I)


def cancelled(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    # "My trip was cancelled in May" looks back; "I'm not flying to Rome in May", forward.
    destination = clean_object(clause.split_time(*m.span("obj"), prefer=clause.tense)[0])
    destination = re.sub(r"\s+after\s+all$", "", destination, flags=re.I)
    if not proper(destination, clause):
        return None
    place = third_person(destination)
    moving = _MOVING.search(m.group(0)) is not None
    what = f"move to {place}" if moving else f"trip to {place}"
    resolved = clause.first_time(prefer=clause.tense)  # "... was cancelled yesterday"
    if resolved is not None:
        text = f"The user cancelled the {what} {when_phrase(resolved)}"
        when = resolved.to_metadata(TemporalKind.EVENT)
    else:
        text = f"The user cancelled the {what}"
        when = before_reference(TemporalKind.EVENT, clause)
    planned = f"planned to move to {place}" if moving else f"planned a trip to {place}"
    return [
        claim(text, clause, kind=ClaimKind.EPISODIC, temporal=when),
        claim(
            f"The user had {planned} but cancelled it",
            clause,
            importance=0.6,
            slot=slot_key(MOVE if moving else TRIP, destination),
            temporal=before_reference(TemporalKind.PLAN, clause),
        ),
    ]


def called_off(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """Something other than a trip called off: "we called off the wedding", "the concert got
    cancelled" — an event, true before the message."""
    what = clean_object(m["obj"])
    if not what:
        return None
    if m.group(0)[:1].lower() == "i":
        text = f"The user called off {third_person(what)}"
    else:
        thing = re.sub(r"^(?:my|our|the)\s+", "", what, flags=re.I)
        text = f"The user's {thing} was cancelled"
    return [
        claim(
            text,
            clause,
            kind=ClaimKind.EPISODIC,
            temporal=before_reference(TemporalKind.EVENT, clause),
        )
    ]


def trip(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    destination, resolved = clause.split_time(*m.span("obj"), prefer="future")
    destination = clean_object(destination)
    unresolved = UNRESOLVED_WHEN.search(destination)
    said_when = ""
    if unresolved is not None:  # "Lima on the 3rd": the place, and the time in words
        destination, said_when = clean_object(destination[: unresolved.start()]), unresolved[0]
    if not proper(destination, clause):
        return None
    if resolved is None and not (_INTENT.search(m.group(0)) or UNRESOLVED_WHEN.search(clause.text)):
        return None  # "I'm going to Paris" with no date may be a day out, not a plan
    place = third_person(destination)
    moving = _MOVING.search(m.group(0)) is not None
    text = f"The user plans to move to {place}" if moving else f"The user plans a trip to {place}"
    when = undated_plan(clause) if resolved is None else resolved.to_metadata(TemporalKind.PLAN)
    return [
        claim(
            f"{text} {when_phrase(resolved)}" if resolved is not None else f"{text} {said_when}",
            clause,
            importance=0.6,
            slot=slot_key(MOVE if moving else TRIP, destination),
            temporal=when,
        )
    ]


def appointment(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "My exam is on Friday": a plan, when the date resolves."""
    resolved = clause.first_time(prefer="future")
    if resolved is None:
        return None
    return [
        claim(
            f"The user has {third_person(clean_object(m['obj']))} {when_phrase(resolved)}",
            clause,
            importance=0.6,
            temporal=resolved.to_metadata(TemporalKind.PLAN),
        )
    ]


def plan(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    action, resolved = clause.split_time(*m.span("obj"), prefer="future")
    action = clean_object(action)
    has = bool(m.groupdict().get("have"))  # "I have a meeting on Friday"
    intent = re.search(r"\b(?:plan|planning|intend|intending)\b", m.group(0), re.I)
    if not action or (resolved is None and not intent):
        return None  # "I'm going to try that": no date, no stated intent
    if not has and (DETERMINER.match(action) or re.match(r"the\b", action, re.I)):
        return None  # "I'm going to the gym": a place, not a verb phrase
    lead = "has" if has else "plans to"
    if resolved is None:
        text, when = f"The user {lead} {third_person(action)}", undated_plan(clause)
    else:
        text = f"The user {lead} {third_person(action)} {when_phrase(resolved)}"
        when = resolved.to_metadata(TemporalKind.PLAN)
    return [claim(text, clause, importance=0.6, temporal=when)]


def event(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    what, resolved = clause.split_time(*m.span("obj"), prefer="past")  # it happened
    what = clean_object(what)
    if resolved is None or not what:
        return None
    verb = " ".join(m["verb"].lower().split())
    slot = None
    if verb in ("quit", "stopped", "gave up") and re.match(r"\w+ing\b", what):
        gerund, _, rest = what.partition(" ")  # "quit smoking" ends "the user smokes"
        slot = habit_slot(gerund, rest)
    return [
        claim(
            f"The user {verb} {third_person(what)} {when_phrase(resolved)}",
            clause,
            kind=ClaimKind.EPISODIC,
            slot=slot,
            temporal=resolved.to_metadata(TemporalKind.EVENT),
        )
    ]
