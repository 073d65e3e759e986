"""Persona (self-model) rules shared by the stores and the maintenance service (reference
§8.6): how a drafted text is sanitised, how much it changes the active one, and when a
draft needs a closer review. A draft never changes anything until the user approves it."""

from __future__ import annotations

import re

from memory_core.ports.claims.maintenance import PersonaState

__all__ = [
    "MAX_PERSONA_CODE_POINTS",
    "REVIEW_ABOVE",
    "PersonaState",
    "change_ratio",
    "needs_review",
    "sanitise_persona",
]

MAX_PERSONA_CODE_POINTS = 1_500
REVIEW_ABOVE = 0.6  # a draft rewriting more than this share of the active text is flagged

_FENCE = re.compile(r"^\s*```[^\n]*\n(?P<body>.*?)\n?```\s*$", re.DOTALL)


def sanitise_persona(text: str) -> str:
    """The model's answer as a persona text: a surrounding code fence stripped, trimmed,
    at most MAX_PERSONA_CODE_POINTS code points."""
    match = _FENCE.match(text)
    body = match.group("body") if match else text
    return body.strip()[:MAX_PERSONA_CODE_POINTS].strip()


def change_ratio(previous: str, draft: str) -> float:
    """Levenshtein distance / the longer length (0.0 identical, 1.0 nothing shared)."""
    longest = max(len(previous), len(draft))
    if longest == 0:
        return 0.0
    if len(previous) < len(draft):
        previous, draft = draft, previous
    row = list(range(len(draft) + 1))
    for i, a in enumerate(previous, start=1):
        diagonal, row[0] = row[0], i
        for j, b in enumerate(draft, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (a != b))
    return row[-1] / longest


def needs_review(ratio: float, *, has_previous: bool) -> bool:
    """A large rewrite of an existing persona is flagged; a first persona is not."""
    return has_previous and ratio > REVIEW_ABOVE
