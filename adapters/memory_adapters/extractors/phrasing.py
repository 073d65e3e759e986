"""Wording for rule-extracted claims: first person to third, verbs, dates, slot keys.

A stored claim is read later, out of its conversation, by a model and by the user, so it is
phrased as a self-contained third-person sentence ("The user lives in Berlin.") and carries
resolved dates ("on 2026-12-04"), never the relative phrase it was said with ("on Friday").
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from memory_core.domain.dates import ResolvedTime, TimeRole
from memory_core.domain.temporal import Precision

__all__ = [
    "about_user",
    "clean_object",
    "sentence",
    "slot_key",
    "third_person",
    "third_person_verb",
    "when_phrase",
]

# First-person words inside an object phrase, rewritten so "my parents" reads "their parents".
_PRONOUNS = {
    "my": "their",
    "mine": "theirs",
    "myself": "themselves",
    "me": "them",
    "i": "they",
    "i'm": "they're",
    "i've": "they've",
    "i'd": "they'd",
    "i'll": "they'll",
}
# For text addressed to the assistant about the user ("Do not bring up the user's ex").
_ABOUT_USER = {
    "my": "the user's",
    "mine": "the user's",
    "myself": "the user",
    "me": "the user",
    "i": "the user",
    "i'm": "the user is",
    "i've": "the user has",
    "i'd": "the user would",
    "i'll": "the user will",
}
_PRONOUN_WORD = re.compile(r"(?<![\w'])(?:i'm|i've|i'd|i'll|myself|mine|my|me|i)(?![\w'])", re.I)

# Trailing words that belong to the conversation, not to the fact ("I live in Berlin now").
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]+(?:now|too|as well|also|anymore|any more|again|please|these days|nowadays"
    r"|currently|at the moment|right now|a lot|very much|so much|lol|haha))+$",
    re.I,
)

_IRREGULAR = {"be": "is", "am": "is", "have": "has", "do": "does", "go": "goes", "can": "can"}


def third_person(text: str) -> str:
    """First-person pronouns of `text` in the third person (singular they)."""
    return _PRONOUN_WORD.sub(lambda m: _PRONOUNS[m.group().lower()], text)


def about_user(text: str) -> str:
    """First-person words of `text` naming "the user" explicitly."""
    return _PRONOUN_WORD.sub(lambda m: _ABOUT_USER[m.group().lower()], text)


def third_person_verb(verb: str) -> str:
    """`eat` -> `eats`, `watch` -> `watches`, `study` -> `studies`, `have` -> `has`."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lower) > 1 and lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def clean_object(text: str) -> str:
    """An object phrase without surrounding punctuation and conversational trailing words."""
    cleaned = text.strip().strip(" \t,;:.!?\"'()")
    previous = None
    while previous != cleaned:
        previous = cleaned
        cleaned = _TRAILING_FILLER.sub("", cleaned).strip().rstrip(",;:.!?")
    return cleaned


def sentence(text: str) -> str:
    """One sentence: first letter capitalised, single spaces, a closing full stop."""
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def slot_key(namespace: str, value: str) -> str:
    """`user.trip` + `New York` -> `user.trip.new_york`: ASCII, lowercase, one key per value.

    Accents fold away (Zürich -> zurich); a name with no Latin letters at all keys by a short
    hash of its normalised form, so the same destination always lands in the same slot.
    """
    folded = unicodedata.normalize("NFKD", value.lower())
    ascii_text = folded.encode("ascii", "ignore").decode("ascii")
    ascii_text = re.sub(r"^(?:the|a|an)\s+", "", ascii_text.strip())
    key = re.sub(r"[^a-z0-9]+", "_", ascii_text).strip("_")[:48].strip("_")
    if not key:
        digest = hashlib.sha256(unicodedata.normalize("NFKC", value).encode("utf-8"))
        key = "h" + digest.hexdigest()[:12]
    return f"{namespace}.{key}"


_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def _local(instant: datetime, zone: str) -> datetime:
    return instant.astimezone(ZoneInfo(zone))


def _render(instant: datetime, precision: Precision, zone: str) -> str:
    local = _local(instant, zone)
    if precision is Precision.YEAR:
        return f"{local.year:04d}"
    if precision in (Precision.MONTH, Precision.QUARTER):
        return f"{_MONTH_NAMES[local.month - 1]} {local.year:04d}"
    day = f"{local.year:04d}-{local.month:02d}-{local.day:02d}"
    if precision in (Precision.HOUR, Precision.MINUTE, Precision.INSTANT):
        return f"{day} {local.hour:02d}:{local.minute:02d}"
    return day


def _point(resolved: ResolvedTime) -> str:
    start, end = resolved.interval.valid_from, resolved.interval.valid_until
    assert start is not None and end is not None
    precision, zone = resolved.precision, resolved.timezone
    # The end bound is exclusive; the last moment inside names the period's last unit.
    last = end - timedelta(microseconds=1)
    first_text, last_text = _render(start, precision, zone), _render(last, precision, zone)
    if precision is Precision.WEEK:
        return f"in the week of {first_text}"
    if precision is Precision.HOUR:
        return f"on {first_text[:10]} from {first_text[11:]}"
    if first_text == last_text:
        return f"on {first_text}" if precision is Precision.DAY else f"in {first_text}"
    return f"from {first_text} to {last_text}"


def when_phrase(resolved: ResolvedTime) -> str:
    """The resolved period in words: "on 2026-12-04", "in 2025", "in December 2026",
    "in the week of 2026-12-07", "from 2027-03-05 to 2027-03-09", "until 2027-03-05"."""
    interval, precision, zone = resolved.interval, resolved.precision, resolved.timezone
    if resolved.role is TimeRole.SINCE and interval.valid_from is not None:
        return f"since {_render(interval.valid_from, precision, zone)}"
    if resolved.role is TimeRole.UNTIL and interval.valid_until is not None:
        last = interval.valid_until - timedelta(microseconds=1)
        return f"until {_render(last, precision, zone)}"
    return _point(resolved)
