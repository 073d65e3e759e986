"""The date phrases the resolver knows and the local calendar period each one names.

"tomorrow", "next week", "in 3 days", "March 5th", "the 5th of March, 2027", "in 2023",
"2027-03-05", each with an optional prefix ("since", "until", "by", "on", ...) that the
resolver (`memory_core.domain.dates`) turns into the role of the bounds. Periods are
computed on local dates counted from `today`; converting them to UTC is the resolver's job.
A month, day or weekday without a year or week is resolved the way `prefer` points.
"""

from __future__ import annotations

from memory_core.domain.date_phrases.handlers import SINCE_PREFIXES, UNTIL_PREFIXES
from memory_core.domain.date_phrases.periods import (
    CONFIDENCE_EXPLICIT,
    CONFIDENCE_INFERRED_YEAR,
    CONFIDENCE_LOOSE,
    CONFIDENCE_RELATIVE,
    CONFIDENCE_VAGUE,
    PREFERENCES,
    LocalPeriod,
    PhraseMatch,
    Prefer,
)
from memory_core.domain.date_phrases.scan import match_phrases

__all__ = [
    "CONFIDENCE_EXPLICIT",
    "CONFIDENCE_INFERRED_YEAR",
    "CONFIDENCE_LOOSE",
    "CONFIDENCE_RELATIVE",
    "CONFIDENCE_VAGUE",
    "PREFERENCES",
    "SINCE_PREFIXES",
    "UNTIL_PREFIXES",
    "LocalPeriod",
    "PhraseMatch",
    "Prefer",
    "match_phrases",
]
