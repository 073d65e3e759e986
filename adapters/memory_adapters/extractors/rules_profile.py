"""Handlers of the profile grammar: what a first-person clause says about the user's life.

The patterns (`rules_grammar`) recognise a subject ("I", "my sister", "our cat"), a
predicate and an object; these handlers decide from closed word lists (`rules_lexicon`)
whether the clause is a lasting fact, and phrase it in the third person. A fact that can
change carries a slot keyed by what it is about, so that its negation or a correction
("I don't have a dog anymore", "my favourite language is Rust these days") supersedes it:
`user.does.<verb>_<object>`, `user.has.<noun>`, `user.is.<state>`, `user.my.<subject>`,
`user.age`, `user.occupation`, `user.origin`.
"""

from __future__ import annotations

import re

from memory_adapters.extractors.phrasing import (
    clean_object,
    slot_key,
    third_person,
    third_person_verb,
    when_phrase,
)
from memory_adapters.extractors.rules_clauses import Clause
from memory_adapters.extractors.rules_common import (
    AGE,
    NAME,
    OCCUPATION,
    ORIGIN,
    UNRESOLVED_WHEN,
    Finding,
    before_reference,
    claim,
    observed_state,
    proper,
    state,
    undated_plan,
)
from memory_adapters.extractors.rules_lexicon import (
    CREDENTIALS,
    FAMILY,
    NATIONALITIES,
    NOT_OWNED,
    OTHER_PEOPLE,
    PETS,
    attribute_word,
    word_set,
)
from memory_core.domain.claims import ClaimKind
from memory_core.domain.temporal import TemporalKind

__all__ = [
    "age",
    "attribute",
    "born",
    "can_do",
    "habit",
    "habit_slot",
    "has_been",
    "have",
    "have_slot",
    "identity",
    "kin",
    "life_event",
    "my_subject",
    "never_done",
    "not_attribute",
    "not_do",
    "occupation",
    "origin",
    "progressive",
    "self_named",
]

_NOT_AN_OBJECT = word_set(
    "not think believe know that this it so what hope want need feel agree mean see guess "
    "wonder suppose"
)
_BARE_HABITS = word_set(
    "smoke drink run cook swim surf climb knit paint sing dance draw meditate commute code "
    "program garden fish hunt cycle hike bake sew"
)
_LIVING = re.compile(r"(?:with|alone|abroad|on\s+(?:my|our)\s+own)\b", re.I)
_WHEN_NOT_WHAT = re.compile(
    r"(?:at\s+night|late|early|hard|a\s+lot|too\s+much|home|out|back|on\s+weekends"
    r"|from\s+home|there|it|that|this|so|nothing|something)",
    re.I,
)
_NOT_IDENTITY = re.compile(r"(?:a|an)\s+(?:bit|little|lot|mess|moment|second|minute)\b", re.I)
_NOT_GOT = re.compile(r"(?:it|that|this|you|them|him|her|confused|lost|distracted)\b", re.I)


def _words(text: str) -> list[str]:
    return [w.strip(",.!?;:'\"").lower() for w in text.split()]


def _singular(noun: str) -> str:
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def kin(text: str) -> str | None:
    """The household noun (family or pet) a phrase is about, singular: the last one before
    its name or clause ("a pet snake" -> snake, "a dog named Biscuit" -> dog)."""
    found = None
    for word in _words(text):
        if word in ("named", "called", "who", "that", "and", "with"):
            break
        if word in FAMILY or word in PETS:
            found = _singular(word)
    return found


def _stem(verb: str) -> str:
    """A verb's key for slots: "smoke", "smokes", "smoking" -> "smok"."""
    lower = verb.lower()
    for suffix in ("ing", "es", "s", "ed"):
        if lower.endswith(suffix) and len(lower) - len(suffix) >= 3:
            lower = lower[: -len(suffix)]
            break
    return lower.rstrip("e")


def have_slot(obj: str) -> str | None:
    """A household member's slot (`user.has.dog`); other possessions are many-valued."""
    noun = kin(obj)
    return slot_key("user.has", noun) if noun else None


def habit_slot(verb: str, obj: str) -> str:
    return slot_key("user.does", f"{_stem(verb)} {obj}".strip())


def _fact(content: str, clause: Clause, *, slot: str | None = None, **fields: object) -> Finding:
    when = observed_state(clause)
    return claim(content, clause, importance=0.6, slot=slot, temporal=when, **fields)


def habit(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    verb, obj = m["verb"].lower(), clean_object(m["obj"] or "")
    first = _words(obj)[:1]
    if (not obj and verb not in _BARE_HABITS) or (first and first[0] in _NOT_AN_OBJECT):
        return None
    if verb == "live" and not _LIVING.match(obj):
        return None  # "I live in a small flat": the home rule's, and it declined
    if verb in ("work", "go", "do") and _WHEN_NOT_WHAT.fullmatch(obj):
        return None  # "I work at night", "I go home": when or where, not what
    content = f"The user {third_person_verb(verb)} {third_person(obj)}".strip()
    return [_fact(content, clause, slot=habit_slot(verb, obj))]


def can_do(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    obj = clean_object(m["obj"])
    if not obj:
        return None
    return [_fact(f"The user can {m['verb'].lower()} {third_person(obj)}", clause)]


def not_do(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "I don't eat pork", "I never drink coffee", "I can't eat shellfish"."""
    verb, obj = m["verb"].lower(), clean_object(m["obj"] or "")
    first = _words(obj)[:1]
    if first and first[0] in _NOT_AN_OBJECT:
        return None
    how = " ".join(m["neg"].lower().split())
    if how in ("can't", "cannot", "can not"):
        content, slot = f"The user cannot {verb} {third_person(obj)}", None
    elif how == "never":
        content, slot = f"The user never {third_person_verb(verb)} {third_person(obj)}", None
    else:
        content = f"The user does not {verb} {third_person(obj)}"
        slot = have_slot(obj) if verb == "have" else habit_slot(verb, obj)
    return [_fact(content.strip(), clause, slot=slot)]


def have(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    obj = clean_object(m["obj"])
    words = _words(obj)
    if (
        not words
        or words[0] in ("to", "been", "had", "done", "got", "no")
        or words[0].endswith("ed")
    ):
        return None  # "I have to go", "I have finished": not a possession
    if any(word in NOT_OWNED for word in words[:3]):
        return None  # "I have a question"
    return [_fact(f"The user has {third_person(obj)}", clause, slot=have_slot(obj))]


def identity(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "I'm a nurse at St. Mary's", "I'm an introvert", "I'm a huge chess fan"."""
    obj = clean_object(m["obj"])
    if _NOT_IDENTITY.match(obj):
        return None
    return [_fact(f"The user is {third_person(obj)}", clause)]


def attribute(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    obj = clean_object(m["obj"])
    if not attribute_word(obj):
        return None  # "I'm so excited": a mood, not a state
    head = _words(obj)[0]
    return [_fact(f"The user is {third_person(obj)}", clause, slot=slot_key("user.is", head))]


def not_attribute(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    obj = clean_object(m["obj"])
    if attribute_word(obj):
        slot = slot_key("user.is", _words(obj)[0])
    elif re.match(r"(?:a|an)\s+\w", obj, re.I) and not _NOT_IDENTITY.match(obj):
        slot = None  # "I'm not a morning person"
    else:
        return None  # "I'm not sure"
    return [_fact(f"The user is not {third_person(obj)}", clause, slot=slot)]


def self_named(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "I'm Kenji": a capitalised word that is no nationality or state."""
    name = m["name"]
    if (
        not name[0].isupper()
        or name in NATIONALITIES
        or attribute_word(name)
        or name.lower() in ("not", "so", "just")
    ):
        return None
    return [claim(f"The user's name is {name}", clause, importance=0.7, slot=NAME)]


def age(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    years = int(m["n"])
    if not 1 <= years <= 120:
        return None
    resolved = clause.first_time(prefer="past")
    return [
        claim(
            f"The user is {years} years old",
            clause,
            importance=0.6,
            slot=AGE,
            temporal=state(resolved, clause),
        )
    ]


def born(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    rest, resolved = clause.split_time(*m.span("obj"), prefer="past")
    rest = clean_object(rest)
    when = f" {when_phrase(resolved)}" if resolved is not None else ""
    where = (
        f" in {rest.removeprefix('in ').strip()}"
        if rest and proper(rest.removeprefix("in ").strip(), clause)
        else ""
    )
    if not when and not where:
        return None
    return [claim(f"The user was born{where}{when}", clause, importance=0.7, slot="user.birth")]


def occupation(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    obj = clean_object(m["obj"])
    if not obj:
        return None
    return [
        claim(
            f"The user works as {third_person(obj)}",
            clause,
            importance=0.7,
            slot=OCCUPATION,
            temporal=observed_state(clause),
        )
    ]


def origin(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    place = clean_object(re.sub(r"\s+originally$", "", m["obj"], flags=re.I))
    if not proper(re.sub(r"^(?:a|the)\s+[\w\s]*?\b(?:in|of)\s+", "", place), clause):
        return None
    lead = "grew up in" if "grew" in m.group(0).lower() else "is originally from"
    return [claim(f"The user {lead} {place}", clause, importance=0.6, slot=ORIGIN)]


def progressive(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "I'm learning Japanese"; with a date, a plan: "next week I'm visiting my parents"."""
    verb, obj = m["verb"].lower(), m["obj"]
    resolved = clause.first_time(prefer="future")
    if resolved is not None:
        for expression in clause.times(prefer="future"):
            obj = obj.replace(expression.text, "")
        obj = clean_object(obj)
        content = f"The user is {verb} {third_person(obj)} {when_phrase(resolved)}"
        # "I'm learning Rust this year" is going on; "I'm visiting Leeds next week", planned.
        when = (
            state(resolved, clause)
            if m["ongoing"] is not None
            else resolved.to_metadata(TemporalKind.PLAN)
        )
        return [claim(content, clause, importance=0.6, temporal=when)]
    if m["ongoing"] is None:
        if UNRESOLVED_WHEN.search(obj) is None:
            return None  # "I'm visiting" with no date says nothing lasting
        content = f"The user is {verb} {third_person(clean_object(obj))}"
        return [claim(content, clause, importance=0.6, temporal=undated_plan(clause))]
    obj = clean_object(obj)
    if not obj:
        return None
    return [_fact(f"The user is {verb} {third_person(obj)}", clause)]


def has_been(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "I've been a developer for six years", "I've been knitting for years"."""
    obj = clean_object(m["obj"])
    lasting = re.search(r"\b(?:for|since)\b", obj, re.I) or re.match(r"(?:a|an)\s", obj, re.I)
    if not obj or not lasting:
        return None
    return [_fact(f"The user has been {third_person(obj)}", clause)]


def never_done(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    obj = clean_object(m["obj"])
    return [_fact(f"The user has never {third_person(obj)}", clause)] if obj else None


def life_event(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """A past event without a date ("I adopted a rescue dog"): true before the message."""
    verb, obj = m["verb"].lower(), clean_object(m["obj"])
    if not obj or _NOT_GOT.match(obj) or re.match(r"to\s", obj, re.I):
        return None
    slot = None
    if verb in ("quit", "stopped") and re.match(r"\w+ing\b", obj):
        slot = habit_slot(obj.split()[0], " ".join(obj.split()[1:]))  # "quit smoking"
    return [
        claim(
            f"The user {verb} {third_person(obj)}",
            clause,
            kind=ClaimKind.EPISODIC,
            slot=slot,
            temporal=before_reference(TemporalKind.EVENT, clause),
        )
    ]


def my_subject(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "My favourite editor is Helix", "my sister lives in Chicago", "my cat's name is
    Mochi". Somebody else's life is theirs ("my boss lives in Zurich"), except their name."""
    subject, verb = m["subj"].strip(), m["verb"].strip().replace("'s", "is")
    rest = clean_object(m["rest"] or "")
    words = _words(subject)
    copular = verb.lower() in ("is", "are", "was", "were")
    naming = re.match(r"(?:called|named)\s", rest, re.I) is not None
    if any(w in OTHER_PEOPLE for w in words) and not (copular and naming):
        return None
    if any(w in CREDENTIALS for w in words):
        return None
    household = kin(subject) is not None
    if not (copular or household or verb.lower() in ("lives", "live", "runs", "uses")):
        return None  # "my head hurts": a moment, not a fact about a thing the user has
    if not rest and not household:
        return None
    # Dates stay as said: "my birthday is on March 3rd" recurs; it is no one day of one year.
    content = f"The user's {third_person(subject)} {verb} {third_person(rest)}".strip()
    slot = None
    if copular:
        key = subject + (" name" if naming else "")
        slot = slot_key("user.my", re.sub(r"'s\b", "", key))
    return [_fact(content, clause, slot=slot)]
