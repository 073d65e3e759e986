"""The date phrases' vocabulary and what each kind of phrase resolves to."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

import attrs

from memory_core.domain.date_phrases.periods import (
    CONFIDENCE_EXPLICIT,
    CONFIDENCE_INFERRED_YEAR,
    CONFIDENCE_LOOSE,
    CONFIDENCE_RELATIVE,
    CONFIDENCE_VAGUE,
    LocalPeriod,
    Prefer,
    _days,
    _month,
    _week,
    _year,
)
from memory_core.domain.temporal import Precision

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
