"""Which sentences state something: questions, hypotheticals and sarcasm are not the user's
facts, whatever they contain.

"Should I move to Berlin?", "If I moved to Tokyo, would I need a visa?", "I might move to
Seoul someday" and "Yeah right, I'm a billionaire" all hold a clause a fact rule would take;
they are screened out before any rule runs, a sentence at a time (sarcasm: the whole
message, since its marker colours what follows). Preferences phrased with "would" ("I'd
rather have tea") are statements and stay.
"""

from __future__ import annotations

import re

__all__ = ["is_sarcastic", "is_statement"]

_QUESTION_OPENING = re.compile(
    r"(?:do|does|did|am|is|are|was|were|can|could|should|would|will|shall|have|has|may)\s+"
    r"(?:I|you|we|my|it|there)\b|(?:what|where|when|who|whose|why|how|which)(?:'s|\s+(?:do"
    r"|does|did|is|are|was|were|can|could|should|would|will|about|if|kind|sort)\b)",
    re.IGNORECASE,
)
# A hypothetical opens the sentence ("If I moved ...") or hedges anywhere in it ("I might",
# "maybe"). Two patterns, not one alternation: searched as one, the opening's branch was
# tried again at every character although it can only match at the start (issue 15).
_HYPOTHETICAL_OPENING = re.compile(
    r"(?:(?:so|and|but|ok|okay|well|hmm),?\s+)?(?:if|suppose|supposing|imagine|assuming"
    r"|what\s+if|let's\s+say|let\s+us\s+say|say|pretend|hypothetically|in\s+(?:a|my|the)\s+"
    r"(?:story|game|novel|dream|script))\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:I|we)\s+(?:might|may|could|wish)\b|\bwould\s+(?:I|we)\b"
    r"|\b(?:maybe|perhaps|someday|some\s+day|one\s+day|not\s+sure\s+if|thinking\s+about"
    r"\s+maybe)\b",
    re.IGNORECASE,
)
# Every text `_HEDGE` matches holds one of these ("maybe" holds "may", "one day" holds "day",
# "not sure if" holds "sure"). Over ASCII a case-insensitive literal matches exactly what
# lower-casing makes equal, so an ASCII sentence holding none is not searched: the search
# tries the alternation at every character, 6 of the 8 µs of a conversation's sentence in
# `is_statement`, and most hold none (issue 15). Other text is always searched.
_HEDGE_WORDS = ("might", "may", "could", "wish", "would", "perhaps", "day", "sure")
_SARCASM = re.compile(
    r"^\W*(?:oh\s+(?:great|joy|wonderful|brilliant|sure|fantastic)|great,?\s+just\s+great"
    r"|yeah,?\s+right|as\s+if|just\s+what\s+I\s+needed|wow,?\s+(?:great|thanks))\b",
    re.IGNORECASE,
)


def is_statement(sentence: str) -> bool:
    """`sentence` states something: no question, no hypothetical."""
    text = sentence.strip()
    if text.endswith("?") or _QUESTION_OPENING.match(text):
        return False
    return _HYPOTHETICAL_OPENING.match(text) is None and not _hedges(text)


def _hedges(text: str) -> bool:
    if text.isascii():
        lowered = text.lower()
        if not any(word in lowered for word in _HEDGE_WORDS):
            return False
    return _HEDGE.search(text) is not None


def is_sarcastic(message: str) -> bool:
    return _SARCASM.match(message) is not None
