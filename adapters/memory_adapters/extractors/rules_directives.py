"""Rules for explicit persistent user instructions; they only ever yield suggestions.

A suggestion becomes a draft the user must approve (R-DIR-1). Suppression topics are the
literal words the user used, without determiners ("the divorce" -> "divorce"), so they match
stored claims by substring (R-DIR-2); pronoun topics ("don't mention it") are too vague.
"""

from __future__ import annotations

import re

from memory_adapters.extractors.phrasing import about_user, clean_object, sentence
from memory_adapters.extractors.rules_clauses import Clause
from memory_adapters.extractors.rules_common import Finding
from memory_core.domain.directives import DirectiveKind
from memory_core.ports.extraction import DirectiveSuggestion

__all__ = ["always", "from_now_on", "suppress"]

_TOPIC_DETERMINER = re.compile(r"^(?:(?:my|the|our|your|his|her|their|that|this|any|a|an)\s+)+")
_VAGUE_TOPIC = {"it", "that", "this", "them", "those", "these", "him", "her", "stuff", "things"}
_SUPPRESS_TAIL = re.compile(
    r"(?:\s+(?:ever again|again|anymore|any more|to me|with me|in (?:the )?future|please))+$",
    re.I,
)
_REQUEST_LEAD = re.compile(
    r"^(?:please\s+|I\s+want\s+you\s+to\s+|I'd\s+like\s+you\s+to\s+|you\s+should\s+"
    r"|you\s+must\s+|can\s+you\s+|could\s+you\s+|make\s+sure\s+(?:to|you)\s+)+",
    re.I,
)
_FIRST_PERSON = re.compile(r"(?:I|I'm|I've|I'd|I'll|my|we|we're|our)\b", re.I)


def suppress(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    phrase = clean_object(_SUPPRESS_TAIL.sub("", clean_object(m["obj"])))
    topic = _TOPIC_DETERMINER.sub("", phrase).strip()
    if not topic or topic.lower() in _VAGUE_TOPIC:
        return None
    content = sentence(f"Do not bring up {about_user(phrase)}")
    return [DirectiveSuggestion(kind=DirectiveKind.SUPPRESS_TOPIC, content=content, topic=topic)]


def always(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    rest = clean_object(m["obj"])
    if not rest:
        return None
    return [DirectiveSuggestion(kind=DirectiveKind.INSTRUCTION, content=sentence(f"Always {rest}"))]


def from_now_on(m: re.Match[str], clause: Clause) -> list[Finding] | None:
    """ "From now on, answer in German" -> an instruction; "from now on I live in Berlin" is a
    statement of fact and is left to the fact rules."""
    if not clause.persistent:
        return None
    request = clean_object(_REQUEST_LEAD.sub("", clause.text))
    if not request or _FIRST_PERSON.match(request):
        return None
    return [DirectiveSuggestion(kind=DirectiveKind.INSTRUCTION, content=sentence(request))]
