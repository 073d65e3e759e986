"""The detector kinds of the secret policy (R-PRIV-1): a protocol, regex detectors and the
payment-card detector, with the specificity ranks that settle overlaps."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.secret_patterns.hints import Hint

__all__ = [
    "CONTEXT",
    "GENERIC",
    "PROVIDER",
    "STRUCTURAL",
    "CardNumberDetector",
    "Detector",
    "RegexDetector",
    "luhn_valid",
]

# Specificity ranks: a provider's own key format says more than a structural shape, which says
# more than a generic "key = value" context.
PROVIDER = 30
STRUCTURAL = 20
CONTEXT = 10
GENERIC = 5


@runtime_checkable
class Detector(Protocol):
    """One kind of secret: yields `(start, end)` spans of secret text, in any order."""

    @property
    def name(self) -> str: ...

    @property
    def specificity(self) -> int: ...

    def spans(self, text: str) -> Iterator[tuple[int, int]]: ...


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    # Patterns mark the secret with groups named `secret*` (alternations need distinct names);
    # the first that took part wins. Without one the whole match is the secret.
    for name, index in sorted(match.re.groupindex.items(), key=lambda item: item[1]):
        if name.startswith("secret") and match.start(index) != -1:
            return match.span(index)
    return match.span()


# Longer than any key, header or scheme that can precede a secret value.
_OVERLAP_WINDOW = 128


@attrs.frozen(kw_only=True)
class RegexDetector:
    """A detector from a compiled pattern, with an optional check on each match."""

    name: str
    pattern: re.Pattern[str]
    specificity: int = STRUCTURAL
    accept: Callable[[str], bool] | None = None
    hint: Hint | None = None  # None: run over every text

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        position = 0
        while (match := self.pattern.search(text, position)) is not None:
            # Resume inside the tail of the match, not after it: a match that swallows the next
            # credential's key ('password: "client_secret": "x"') must not hide that credential.
            # Only the tail, so long overlapping runs stay linear; the policy merges overlaps.
            position = max(match.start() + 1, match.end() - _OVERLAP_WINDOW)
            start, end = _secret_span(match)
            if end > start and (self.accept is None or self.accept(text[start:end])):
                yield start, end


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum that every payment card number satisfies."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


# A maximal run of digits joined by single spaces or dashes, not continuing a decimal or a
# thousands-separated number on the left.
_DIGIT_RUN = re.compile(r"(?<!\d)(?<!\d[.,])\d+(?:[ -]\d+)*")


# A card number holds 13 to 19 digits.
_CARD_HINT = Hint(digits=13)


@attrs.frozen(kw_only=True)
class CardNumberDetector:
    """Payment card numbers: 13-19 digits (spaces/dashes allowed) that pass Luhn.

    Only a whole digit run counts: a Luhn-valid stretch inside a longer run (a 20-digit id, a
    list of numbers) is not a card, which keeps order numbers and ids from being flagged.
    """

    name: str = "card_number"
    specificity: int = STRUCTURAL
    hint: Hint = _CARD_HINT

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        for match in _DIGIT_RUN.finditer(text):
            end = match.end()
            if end + 1 < len(text) and text[end] in ".," and text[end + 1].isdigit():
                continue  # a decimal fraction or a thousands group follows: a quantity
            digits = re.sub(r"\D", "", match.group())
            if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits):
                yield match.span()
