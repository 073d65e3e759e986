"""Rules for states and preferences: home, employer, name, diet, likes, allergies, negations.

Single-valued facts carry a slot (`user.home_city`, `user.employer`, `user.preferred_name`,
`user.diet`) so a later statement in the same slot — including a correction ("actually, I
live in Munich") or a negation ("I don't live in Paris anymore") — lets the decision step
supersede the earlier claim instead of keeping both as current.
"""

from __future__ import annotations

import re

from memory_adapters.extractors.phrasing import clean_object, third_person, third_person_verb
from memory_adapters.extractors.rules_clauses import Clause
from memory_adapters.extractors.rules_common import (
    DIET,
    EMPLOYER,
    HOME,
    NAME,
    Finding,
    claim,
    observed_state,
    proper,
    state,
    writes_lowercase,
)
from memory_adapters.extractors.rules_profile import habit_slot, have_slot
from memory_core.domain.claims import Category
from memory_core.domain.directives import DirectiveKind
from memory_core.ports.extraction import DirectiveSuggestion

__all__ = [
    "allergy",
    "diet",
    "employer",
    "fan",
    "home",
    "no_longer",
    "preference",
    "preferred_name",
]

_REACTION = re.compile(r"(?:that|this|it|these|those|your|you|the idea|what|how)\b", re.I)
# Words that follow "call me" without being a name ("call me later", "call me when ...").
_NOT_A_NAME = frozenset((
    "later", "back", "soon", "tomorrow", "tonight", "today", "now", "anytime", "whenever",
    "when", "if", "at", "on", "in", "after", "before", "again", "maybe", "please", "whatever",
    "anything", "something", "it", "that", "this", "you",
))  # fmt: skip
# Where the place name ends: "Berlin with my wife", "Berlin and work at Acme" — but not
# "Bosnia and Herzegovina", whose "and" joins two capitalised words.
_PLACE_TAIL = re.compile(r",|\s+(?:with|for|because|since)\s+|\s+and\s+(?![A-Z])")
_ORG_TAIL = re.compile(r",|\s+(?:as|with|because|since|and)\s+", re.I)


def home(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    # "I moved to Lisbon in May" is the May just past; "I live in Rome until May", the next.
    place, resolved = clause.split_time(*m.span("obj"), prefer=clause.tense)
    place = clean_object(_PLACE_TAIL.split(place)[0])
    if not proper(place, clause):
        return None
    when = state(resolved, clause)
    return [claim(f"The user lives in {place}", clause, importance=0.7, slot=HOME, temporal=when)]


def employer(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    org, resolved = clause.split_time(*m.span("obj"), prefer=clause.tense)
    org = clean_object(_ORG_TAIL.split(org)[0])
    if not (proper(org, clause) or re.match(r"an?\s+\w", org, re.I)):
        return None  # "I work at night"; "a startup" is still an employer
    return [
        claim(
            f"The user works at {third_person(org)}",
            clause,
            importance=0.7,
            slot=EMPLOYER,
            temporal=state(resolved, clause),
        )
    ]


def _name(text: str, clause: Clause) -> str | None:
    words: list[str] = []
    for raw in text.split()[:3]:
        word = raw.strip(",.!?;:\"'")
        capitalised = bool(word) and word[0].isupper()
        if not word or word.lower() in _NOT_A_NAME:
            break
        if not (capitalised or (writes_lowercase(clause) and not words)):
            break
        words.append(word)
    return " ".join(words) or None


def preferred_name(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    name = _name(m["obj"], clause)
    if name is None:
        return None
    stated = " ".join(m["how"].lower().split()) in ("my name is", "my name's")
    found: list[Finding] = [
        claim(
            f"The user's name is {name}" if stated else f"The user prefers to be called {name}",
            clause,
            importance=0.7,
            slot=NAME,
            category=None if stated else Category.USER_PREFERENCE,
        )
    ]
    if clause.persistent and not stated:
        # "Call me Sam from now on": the name is a fact now; the request, a draft beside it.
        found.append(
            DirectiveSuggestion(kind=DirectiveKind.INSTRUCTION, content=f"Call me {name}.")
        )
    return found


def fan(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    what = clean_object(m["obj"])
    if not what:
        return None
    negated = re.search(r"\bnot\b", m.group(0)[: m.start("obj")], re.I) is not None
    return [
        claim(
            f"The user is {'not ' if negated else ''}a fan of {third_person(what)}",
            clause,
            importance=0.6,
            category=Category.USER_PREFERENCE,
        )
    ]


def diet(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    kind = " ".join(m["diet"].lower().replace("-", " ").split())
    return [
        claim(
            f"The user is {kind}",
            clause,
            importance=0.7,
            category=Category.USER_PREFERENCE,
            slot=DIET,
        )
    ]


_NEGATED_HOME = re.compile(r"(?:live|living|based|located)\s+in\s+(?P<obj>.+)", re.I)
_NEGATED_WORK = re.compile(r"(?:work|working|employed)\s+(?:at|for|by)\s+(?P<obj>.+)", re.I)
_NEGATED_DIET = re.compile(r"(?:a\s+)?(?P<diet>vegetarian|vegan|pescatarian)", re.I)


def no_longer(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """The corrected fact as a state from now on, in the same slot as the fact it ends."""
    rest = clean_object(m["obj"])
    to_be = bool(m["be"])
    slot = None
    if found := _NEGATED_HOME.fullmatch(rest):
        place = clean_object(found["obj"])
        if not proper(place, clause):
            return None
        content, slot = f"The user no longer lives in {place}", HOME
    elif found := _NEGATED_WORK.fullmatch(rest):
        org = third_person(clean_object(found["obj"]))
        content, slot = f"The user no longer works at {org}", EMPLOYER
    elif to_be and (found := _NEGATED_DIET.fullmatch(rest)):
        content, slot = f"The user is no longer {found['diet'].lower()}", DIET
    elif to_be:
        content = f"The user is no longer {third_person(rest)}"
    else:
        verb, _, tail = rest.partition(" ")
        if not verb.isalpha():
            return None
        content = f"The user no longer {third_person_verb(verb)} {third_person(tail)}"
        # The habit or household member it ends: "I don't have a dog anymore".
        slot = have_slot(tail) if verb.lower() == "have" else habit_slot(verb, tail)
    return [claim(content, clause, importance=0.6, slot=slot, temporal=observed_state(clause))]


_PREFERENCE_VERBS = {
    "prefer": "prefers", "like": "likes", "love": "loves", "enjoy": "enjoys", "adore": "adores",
    "hate": "hates", "dislike": "dislikes", "detest": "detests", "can't stand": "cannot stand",
    "cannot stand": "cannot stand", "don't like": "does not like", "do not like": "does not like",
    "don't enjoy": "does not enjoy", "'d prefer": "prefers", "would prefer": "prefers",
    "'d rather": "would rather", "would rather": "would rather",
}  # fmt: skip


def preference(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    what = clean_object(m["obj"])
    if not what or _REACTION.match(what):
        return None  # "I like that idea" reacts to the conversation; it is not a preference
    verb = _PREFERENCE_VERBS[" ".join(m["verb"].lower().split())]
    return [
        claim(
            f"The user {verb} {third_person(what)}",
            clause,
            importance=0.6,
            category=Category.USER_PREFERENCE,
        )
    ]


def allergy(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    what = clean_object(m["obj"])
    if not what:
        return None
    return [
        claim(
            f"The user is allergic to {third_person(what)}",
            clause,
            importance=0.8,  # forgetting it can hurt the user
            category=Category.USER_PREFERENCE,
        )
    ]
