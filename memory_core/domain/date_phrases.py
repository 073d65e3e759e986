"""The date phrases the resolver knows and the local calendar period each one names.

"tomorrow", "next week", "in 3 days", "March 5th", "the 5th of March, 2027", "in 2023",
"2027-03-05", each with an optional prefix ("since", "until", "by", "on", ...) that the
resolver (`memory_core.domain.dates`) turns into the role of the bounds. Periods are
computed on local dates counted from `today`; converting them to UTC is the resolver's job.
A month, day or weekday without a year or week is resolved the way `prefer` points.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Literal, get_args

import attrs

from memory_core.domain.temporal import Precision

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

# How sure a resolution is (the temporal confidence, R-DOM-2), by how much the phrase leaves open.
CONFIDENCE_EXPLICIT = 0.9  # ISO dates, "5 March 2027", "in 2023"
CONFIDENCE_INFERRED_YEAR = 0.85  # "March 5th", "in March": the year is inferred
CONFIDENCE_RELATIVE = 0.8  # today, tomorrow, "on Friday", "in 3 days"
CONFIDENCE_LOOSE = 0.7  # "next week", "in two weeks", "next Friday", tonight, "this month"
CONFIDENCE_VAGUE = 0.6  # "next month", "in a month", "last year": often said loosely

# Which occurrence a month, day or weekday without a year or week names.
Prefer = Literal["past", "future", "nearest"]
PREFERENCES: tuple[str, ...] = get_args(Prefer)


# --- the period a phrase names, in local wall time -------------------------------------------


@attrs.frozen(kw_only=True)
class LocalPeriod:
    """The calendar period a phrase names, in the zone's wall time (naive)."""

    start: datetime  # naive local wall time
    end: datetime
    precision: Precision
    confidence: float


def _days(first: date, count: int, confidence: float) -> LocalPeriod:
    start = datetime.combine(first, time())
    return LocalPeriod(
        start=start,
        end=start + timedelta(days=count),
        precision=Precision.DAY,
        confidence=confidence,
    )


def _week(day: date, confidence: float) -> LocalPeriod:
    monday = day - timedelta(days=day.weekday())
    return attrs.evolve(_days(monday, 7, confidence), precision=Precision.WEEK)


def _month(year: int, month: int, confidence: float) -> LocalPeriod:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    after = (year + month // 12, month % 12 + 1)
    return LocalPeriod(
        start=datetime(year, month, 1),
        end=datetime(*after, 1),
        precision=Precision.MONTH,
        confidence=confidence,
    )


def _year(year: int, confidence: float) -> LocalPeriod:
    return LocalPeriod(
        start=datetime(year, 1, 1),
        end=datetime(year + 1, 1, 1),
        precision=Precision.YEAR,
        confidence=confidence,
    )


# --- vocabulary ------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_NAMES = (
    "january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul",
    "august aug", "september sept sep", "october oct", "november nov", "december dec",
)  # fmt: skip
_MONTHS = {name: index + 1 for index, names in enumerate(_MONTH_NAMES) for name in names.split()}
_NUM = r"(?P<num>\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"

_PREFIX_WORDS = (
    "since", "after", "until", "till", "til", "through", "thru", "by", "before", "from", "to",
    "on", "in", "during",
)  # fmt: skip
_PREFIX = r"(?:(?P<prefix>" + "|".join(_PREFIX_WORDS) + r")\s+)?"
SINCE_PREFIXES = {"since", "after"}
UNTIL_PREFIXES = {"until", "till", "til", "through", "thru", "by", "before"}
# A range opens with one of these and closes with an until-prefix or "to".
_RANGE_OPENERS = {"since", "from"}
_RANGE_CLOSERS = UNTIL_PREFIXES - {"before"} | {"to"}


@attrs.frozen(kw_only=True)
class _Context:
    today: date
    prefix: str | None
    prefer: Prefer

    @property
    def direction(self) -> Prefer:
        # "since March" is the March that began most recently, whatever else the sentence
        # says; every other phrase with an implied year or week goes the caller's way.
        return "past" if self.prefix == "since" else self.prefer


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def _relative_word(m: re.Match[str], ctx: _Context) -> LocalPeriod:
    word = m["word"].lower()
    if word == "tonight":
        start = datetime.combine(ctx.today, time(18))
        end = datetime.combine(ctx.today + timedelta(days=1), time())
        return LocalPeriod(
            start=start, end=end, precision=Precision.HOUR, confidence=CONFIDENCE_LOOSE
        )
    offset = {"today": 0, "tomorrow": 1, "yesterday": -1}[word]
    return _days(ctx.today + timedelta(days=offset), 1, CONFIDENCE_RELATIVE)


def _relative_period(m: re.Match[str], ctx: _Context) -> LocalPeriod:
    step = {"this": 0, "next": 1, "last": -1}[m["which"].lower()]
    period = m["period"].lower()
    if period == "week":
        return _week(ctx.today + timedelta(weeks=step), CONFIDENCE_LOOSE)
    confidence = CONFIDENCE_LOOSE if step == 0 else CONFIDENCE_VAGUE
    if period == "month":
        return _month(ctx.today.year, ctx.today.month + step, confidence)
    return _year(ctx.today.year + step, confidence)


def _weekday(m: re.Match[str], ctx: _Context) -> LocalPeriod:
    target = _WEEKDAYS.index(m["weekday"].lower())
    which = (m["which"] or "").lower()
    today = ctx.today
    confidence = CONFIDENCE_RELATIVE
    if which == "this":  # the one in the current Monday-to-Sunday week
        day = today + timedelta(days=target - today.weekday())
    elif which == "next":  # the one in next week; people also use it for the coming one
        day = today + timedelta(days=7 + target - today.weekday())
        confidence = CONFIDENCE_LOOSE
    elif which == "last":
        day = today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
    else:  # "on Friday": the last one, the next one, or the nearer of the two
        back = (today.weekday() - target - 1) % 7 + 1  # 1..7 days ago
        ahead = (target - today.weekday() - 1) % 7 + 1  # 1..7 days on
        direction = ctx.direction
        if direction == "nearest":
            if ahead == 7:  # today's own weekday is nearest of all
                return _days(today, 1, confidence)
            direction = "past" if back < ahead else "future"  # 7 days apart: never a tie
        day = today + timedelta(days=-back if direction == "past" else ahead)
    return _days(day, 1, confidence)


def _offset(m: re.Match[str], ctx: _Context) -> LocalPeriod:
    count = _number(m["num"]) * (-1 if m.groupdict().get("ago") else 1)
    unit = m["unit"].lower()
    if unit == "day":
        return _days(ctx.today + timedelta(days=count), 1, CONFIDENCE_RELATIVE)
    if unit == "week":
        return _week(ctx.today + timedelta(weeks=count), CONFIDENCE_LOOSE)
    if unit == "month":
        return _month(ctx.today.year, ctx.today.month + count, CONFIDENCE_VAGUE)
    return _year(ctx.today.year + count, CONFIDENCE_VAGUE)


def _implied_year(ctx: _Context, month: int, day: int | None) -> int:
    """The year that makes a yearless month (or day) the last one, the next one, or the one
    nearer today; the current month (or today) counts as both last and next."""
    today = ctx.today
    key, now_key = (month, day or 0), (today.month, today.day if day else 0)
    past = today.year if key <= now_key else today.year - 1
    future = today.year if key >= now_key else today.year + 1
    direction = ctx.direction
    if direction == "nearest":
        # A tie (May, said in November) goes forward, as plans do.
        nearer_past = _distance(today, past, month, day) < _distance(today, future, month, day)
        direction = "past" if nearer_past else "future"
    return past if direction == "past" else future


def _distance(today: date, year: int, month: int, day: int | None) -> float:
    """How far the named month (in months) or day (in days) of `year` lies from today."""
    if day is None:
        return abs((year - today.year) * 12 + month - today.month)
    try:
        return abs((date(year, month, day) - today).days)
    except ValueError:
        return float("inf")  # February 29 of a common year: the other reading wins


def _month_name(m: re.Match[str], ctx: _Context) -> str | None:
    name = m["month"]
    # Lowercase "may" without a preposition is the verb ("may 5 people join?").
    if name == "may" and ctx.prefix is None:
        return None
    return name.lower()


def _calendar_day(m: re.Match[str], ctx: _Context) -> LocalPeriod | None:
    name = _month_name(m, ctx)
    if name is None:
        return None
    month, day = _MONTHS[name], int(m["day"])
    if day > 31:
        return None  # "March 40 people": a count, not a day
    if m["year"]:
        return _days(date(int(m["year"]), month, day), 1, CONFIDENCE_EXPLICIT)
    year = _implied_year(ctx, month, day)
    return _days(date(year, month, day), 1, CONFIDENCE_INFERRED_YEAR)


def _calendar_month(m: re.Match[str], ctx: _Context) -> LocalPeriod | None:
    name = _month_name(m, ctx)
    if name is None or (ctx.prefix is None and not m["year"]):
        return None  # a bare month name is too often something else ("march on")
    month = _MONTHS[name]
    if m["year"]:
        return _month(int(m["year"]), month, CONFIDENCE_EXPLICIT)
    return _month(_implied_year(ctx, month, None), month, CONFIDENCE_INFERRED_YEAR)


def _iso_date(m: re.Match[str], ctx: _Context) -> LocalPeriod:
    return _days(date(int(m["year"]), int(m["month"]), int(m["day"])), 1, CONFIDENCE_EXPLICIT)


def _calendar_year(m: re.Match[str], ctx: _Context) -> LocalPeriod | None:
    if ctx.prefix is None:
        return None  # a bare four-digit number is rarely a year claim
    return _year(int(m["year"]), CONFIDENCE_EXPLICIT)


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


_PRECISION_ORDER = tuple(Precision)


@attrs.frozen(kw_only=True)
class PhraseMatch:
    """One recognised phrase: its span `[start, end)`, its prefix word and its period."""

    start: int
    end: int
    prefix: str | None
    period: LocalPeriod


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
