"""The local calendar period a date phrase names, and how sure its resolution is."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Literal, get_args

import attrs

from memory_core.domain.temporal import Precision

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


_PRECISION_ORDER = tuple(Precision)


@attrs.frozen(kw_only=True)
class PhraseMatch:
    """One recognised phrase: its span `[start, end)`, its prefix word and its period."""

    start: int
    end: int
    prefix: str | None
    period: LocalPeriod
