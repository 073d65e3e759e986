"""Where a text names date phrases: the patterns, the words each needs, the matching."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from memory_core.domain.date_phrases.handlers import (
    _DAY,
    _MONTH,
    _MONTHS,
    _NUM,
    _NUMBER_WORDS,
    _PREFIX,
    _PREFIX_WORDS,
    _RANGE_CLOSERS,
    _RANGE_OPENERS,
    _UNIT,
    _WEEKDAY,
    _WEEKDAYS,
    _YEAR,
    _calendar_day,
    _calendar_month,
    _calendar_year,
    _Context,
    _iso_date,
    _offset,
    _relative_period,
    _relative_word,
    _weekday,
)
from memory_core.domain.date_phrases.periods import (
    _PRECISION_ORDER,
    LocalPeriod,
    PhraseMatch,
    Prefer,
)

_Handler = Callable[[re.Match[str], _Context], "LocalPeriod | None"]


def _pattern(base: str, *, end: str = r"\b", start: str = r"\b") -> re.Pattern[str]:
    return re.compile(start + _PREFIX + base + end, re.IGNORECASE)


_UNITS = ("day", "week", "month", "year")
_UNIT_WORDS = (*_UNITS, *(unit + "s" for unit in _UNITS))
_WHICH = ("this", "next", "last")
# The key of a word (a maximal `\w` run) of the text: lowercased when it is ASCII; a word
# starting with an ASCII digit (a number, a day, a year) is `_DIGIT`, and a word holding
# anything else (a fullwidth letter, a Kelvin sign IGNORECASE reads as "k", a CJK run) is
# `_ANY`, which every pattern may need and open with.
_DIGIT = "#"
_ANY = "*"


def _keys(*words: str) -> frozenset[str]:
    return frozenset((*words, _ANY))


# Each pattern with two sets of word keys. The words one of which it cannot match without:
# a text holding none of them is not scanned by it — nearly every message names no date.
# And the words its match can open with after the prefix: every alternative is a whole
# word of the text (each is followed by a space, a `\b` or a comma, and one opening the
# match stands at a word boundary), so a match starts at such a word or at a prefix word
# right before one.
_PATTERNS: tuple[tuple[re.Pattern[str], _Handler, frozenset[str], frozenset[str]], ...] = (
    (
        _pattern(r"(?P<word>today|tonight|tomorrow|yesterday)"),
        _relative_word,
        _keys("today", "tonight", "tomorrow", "yesterday"),
        _keys("today", "tonight", "tomorrow", "yesterday"),
    ),
    (
        _pattern(r"(?P<which>this|next|last)\s+(?P<period>week|month|year)"),
        _relative_period,
        _keys("week", "month", "year"),
        _keys(*_WHICH),
    ),
    (
        _pattern(r"(?:(?P<which>this|next|last)\s+)?" + _WEEKDAY),
        _weekday,
        _keys(*_WEEKDAYS),
        _keys(*_WHICH, *_WEEKDAYS),
    ),
    (_pattern(rf"in\s+{_NUM}\s+{_UNIT}"), _offset, _keys(*_UNIT_WORDS), _keys("in")),
    (
        _pattern(rf"{_NUM}\s+{_UNIT}\s+from\s+now"),
        _offset,
        _keys(*_UNIT_WORDS),
        _keys(*_NUMBER_WORDS, _DIGIT),
    ),
    (
        _pattern(rf"{_NUM}\s+{_UNIT}\s+(?P<ago>ago)"),
        _offset,
        _keys(*_UNIT_WORDS),
        _keys(*_NUMBER_WORDS, _DIGIT),
    ),
    (
        _pattern(rf"(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?"),
        _calendar_day,
        _keys(*_MONTHS),
        _keys("the", _DIGIT),
    ),
    (
        _pattern(rf"{_MONTH}\s+(?:the\s+)?{_DAY}(?:,?\s+{_YEAR})?"),
        _calendar_day,
        _keys(*_MONTHS),
        _keys(*_MONTHS),
    ),
    (
        _pattern(rf"{_MONTH}(?:,?\s+{_YEAR})?"),
        _calendar_month,
        _keys(*_MONTHS),
        _keys(*_MONTHS),
    ),
    (
        _pattern(r"(?<![\d-])(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})", end=r"(?![\d-])"),
        _iso_date,
        _keys(_DIGIT),
        _keys(_DIGIT),
    ),
    (
        _pattern(r"(?P<year>1[89]\d\d|2[01]\d\d)"),
        _calendar_year,
        _keys(_DIGIT),
        _keys(_DIGIT),
    ),
)
_PREFIXES = frozenset(_PREFIX_WORDS)
# Every word some pattern needs, and the digits: an ASCII text holding none of them even as
# a substring holds none as a word, and is not split into words at all — nearly every
# message of a conversation names no date (the rules extractor reads them all).
_NEEDED = (
    *"0123456789",
    *sorted(set().union(*(needs for _, _, needs, _ in _PATTERNS)) - {_DIGIT, _ANY}),
)
_OPENERS = _PREFIXES.union(*(opens for *_, opens in _PATTERNS))
_RUN = re.compile(r"\w+")


def _key(word: str) -> str:
    if not word.isascii():
        return _ANY
    return _DIGIT if word[0].isdigit() else word.lower()


def _words(text: str) -> list[tuple[int, str]]:
    """Each word of `text`: where it starts and its key."""
    if text.isascii():  # lowercasing keeps every offset: one pass, no call per word
        return [
            (m.start(), _DIGIT if (word := m.group())[0].isdigit() else word)
            for m in _RUN.finditer(text.lower())
        ]
    return [(m.start(), _key(m.group())) for m in _RUN.finditer(text)]


def _matches(text: str) -> list[tuple[re.Match[str], _Handler]]:
    """Every pattern's matches, as `pattern.finditer(text)` finds them, pattern by pattern.

    A pattern is tried only at the words it can start at: a pasted page has hundreds of
    word boundaries, and trying eleven patterns' prefix alternation at each of them was
    1.9 ms of a turn (issue 15). Left to right, each match from where the previous one
    ended, this finds what `finditer` finds: that tries every other position too, but
    none of those can start a match."""
    if text.isascii():
        lowered = text.lower()
        if not any(word in lowered for word in _NEEDED):
            return []
    words = _words(text)
    present = {key for _, key in words}
    # Each word a match may start at, and for a prefix word the key of the word after it.
    anchors = [
        (start, key, words[index + 1][1] if key in _PREFIXES and index + 1 < len(words) else None)
        for index, (start, key) in enumerate(words)
        if key in _OPENERS
    ]
    found: list[tuple[re.Match[str], _Handler]] = []
    for pattern, handler, needs, opens in _PATTERNS:
        if needs.isdisjoint(present):
            continue
        until = 0
        for start, key, after in anchors:
            if start < until or not (key in opens or after in opens):
                continue
            m = pattern.match(text, start)
            if m is not None:
                found.append((m, handler))
                until = m.end()
    return found


def _candidates(text: str, today: date, prefer: Prefer) -> list[PhraseMatch]:
    matches = sorted(_matches(text), key=lambda item: (item[0].start(), -item[0].end()))
    chosen: list[PhraseMatch] = []
    taken_until = 0
    for m, handler in matches:
        if m.start() < taken_until:
            continue  # the longest match at the earliest position wins
        prefix = m["prefix"].lower() if m["prefix"] else None
        try:
            period = handler(m, _Context(today=today, prefix=prefix, prefer=prefer))
        except (ValueError, OverflowError):
            # "February 30th" names an impossible day: no shorter reading ("on February")
            # of the same words may stand in for it.
            taken_until = m.end()
            continue
        if period is not None:
            chosen.append(PhraseMatch(start=m.start(), end=m.end(), prefix=prefix, period=period))
            taken_until = m.end()
    return chosen


def _join_ranges(text: str, found: list[PhraseMatch]) -> list[PhraseMatch]:
    """Fuse "from March 5 until March 9" into one bounded period."""
    joined: list[PhraseMatch] = []
    for item in found:
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and previous.prefix in _RANGE_OPENERS
            and item.prefix in _RANGE_CLOSERS
            and not text[previous.end : item.start].strip(" ,")
            and previous.period.start < item.period.end
        ):
            coarser = max(
                previous.period.precision, item.period.precision, key=_PRECISION_ORDER.index
            )
            period = LocalPeriod(
                start=previous.period.start,
                end=item.period.end,
                precision=coarser,
                confidence=min(previous.period.confidence, item.period.confidence),
            )
            joined[-1] = PhraseMatch(start=previous.start, end=item.end, prefix=None, period=period)
            continue
        joined.append(item)
    return joined


def match_phrases(text: str, today: date, prefer: Prefer) -> list[PhraseMatch]:
    """Every date phrase in `text`, left to right, its period counted from `today`; a range
    ("from March 5 until March 9") is one match."""
    return _join_ranges(text, _candidates(text, today, prefer))
