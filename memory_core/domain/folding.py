"""Text in the form a reader sees it, with a map back to the original (R-PRIV-1, R-READ-6).

Filters that match patterns — the secret detectors, the prompt sanitiser — must see what a
model or a tokenizer will see, not the code points a writer chose: a zero-width space or a
soft hyphen inside an API key renders as nothing and is stripped downstream; a fullwidth
`＜` or a thin space NFKC-normalises to ASCII; a Cyrillic `с` reads as Latin `c`. Folding is
per character, so every folded character knows which original character it came from and a
match on the folded text can act on the original (redact it, break it) without rewriting
the rest of the user's text.
"""

from __future__ import annotations

import unicodedata

import attrs

__all__ = ["Folded", "fold"]

# Letters that render like the Latin letters of tag and role names, and hyphens NFKC keeps.
_CYRILLIC = ("аеорсухіѕјԁһӏԛԝАВЕКМНОРСТХІЅЈУԌ", "aeopcyxisjdhlqwABEKMHOPCTXISJYG")
_GREEK = ("αεικνορτυχΑΒΕΗΙΚΜΝΟΡΤΥΧΖ", "aeikvoptuxABEHIKMNOPTYXZ")
_HYPHENS = ("\u2010\u2011\u2012\u2013\u2212\u2043", "------")
_LOOKALIKES = str.maketrans(
    *("".join(part) for part in zip(_CYRILLIC, _GREEK, _HYPHENS, strict=True))
)


def _is_invisible(char: str) -> bool:
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return True  # variation selectors
    return unicodedata.category(char) == "Cf"


@attrs.frozen(slots=True)
class Folded:
    """The folded text and, per folded character, the index of its original character."""

    text: str
    origin: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span `[start, end)` of the folded text came from (end > start)."""
        return self.origin[start], self.origin[end - 1] + 1

    def original_index(self, index: int) -> int:
        return self.origin[index]


def fold(text: str, *, keep_invisible: bool = False, lookalikes: bool = False) -> Folded:
    """Per character: format characters and variation selectors dropped (unless
    `keep_invisible`), NFKC, every Unicode space to ASCII space, and with `lookalikes` the
    Cyrillic/Greek look-alikes of Latin letters to those letters."""
    if text.isascii():  # nothing to fold: the common case stays cheap
        return Folded(text, tuple(range(len(text))))
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if not keep_invisible and _is_invisible(char):
            continue
        for folded in unicodedata.normalize("NFKC", char):
            out = " " if unicodedata.category(folded) == "Zs" else folded
            chars.append(out.translate(_LOOKALIKES) if lookalikes else out)
            origin.append(index)
    return Folded("".join(chars), tuple(origin))
