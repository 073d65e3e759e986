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

import bisect
import functools
import re
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


def _needs_folding(char: str) -> bool:
    # A superset is harmless (such a character is folded to itself): any decomposition
    # stands in for "NFKC changes it", which is much cheaper to ask.
    return (
        unicodedata.category(char) in ("Cf", "Zs")
        or unicodedata.decomposition(char) != ""
        or ord(char) in _LOOKALIKES
        or 0xFE00 <= ord(char) <= 0xFE0F
    )


@functools.cache
def _special() -> re.Pattern[str]:
    """Characters some fold changes: computed once over the BMP (tens of milliseconds);
    every astral character counts, so nothing is missed. Text between them is copied."""
    bmp = "".join(
        re.escape(chr(code)) for code in range(0x80, 0x10000) if _needs_folding(chr(code))
    )
    return re.compile(f"[{bmp}\\U00010000-\\U0010FFFF]+")


@functools.lru_cache(maxsize=8192)  # bounded: a hostile text may hold any code point
def _fold_char(char: str, keep_invisible: bool, lookalikes: bool) -> str:
    if not keep_invisible and _is_invisible(char):
        return ""
    folded = "".join(
        " " if unicodedata.category(c) == "Zs" else c for c in unicodedata.normalize("NFKC", char)
    )
    return folded.translate(_LOOKALIKES) if lookalikes else folded


_AFTER_ANY = 1 << 62  # sorts after every original index in a (folded, original) pair


@attrs.frozen
class Folded:
    """The folded text and where each of its characters came from.

    `breaks` holds `(folded index, original index)` pairs at which the one-to-one run
    restarts (a character dropped or expanded); between two breaks the offsets advance
    together, so the map costs nothing for text folding leaves alone."""

    text: str
    breaks: tuple[tuple[int, int], ...] = ()

    def original_index(self, index: int) -> int:
        """The original index of folded character `index`."""
        at = bisect.bisect_right(self.breaks, (index, _AFTER_ANY)) - 1
        if at < 0:
            return index
        folded_start, original_start = self.breaks[at]
        return original_start + (index - folded_start)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span `[start, end)` of the folded text came from (end > start)."""
        return self.original_index(start), self.original_index(end - 1) + 1


def fold(text: str, *, keep_invisible: bool = False, lookalikes: bool = False) -> Folded:
    """Per character: format characters and variation selectors dropped (unless
    `keep_invisible`), NFKC, every Unicode space to ASCII space, and with `lookalikes` the
    Cyrillic/Greek look-alikes of Latin letters to those letters."""
    if text.isascii():  # nothing to fold: the common case stays cheap
        return Folded(text)
    parts: list[str] = []
    breaks: list[tuple[int, int]] = []
    length = 0  # of the folded text so far
    copied_to = 0  # original text before this is handled
    for match in _special().finditer(text):
        parts.append(text[copied_to : match.start()])
        length += match.start() - copied_to
        for index in range(match.start(), match.end()):
            folded = _fold_char(text[index], keep_invisible, lookalikes)
            if len(folded) != 1:
                # The run restarts at each expanded character and after the character.
                breaks.extend((length + offset, index) for offset in range(len(folded)))
                breaks.append((length + len(folded), index + 1))
            parts.append(folded)
            length += len(folded)
        copied_to = match.end()
    parts.append(text[copied_to:])
    return Folded("".join(parts), tuple(breaks))
