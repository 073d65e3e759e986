"""Date phrases ("tomorrow", "next week", "since March", "2027-03-05") resolved to intervals.

Pure and deterministic: the reference instant and the IANA zone are always parameters, so the
`rules` extractor resolves "tomorrow" against the turn's domain clock, never the wall clock.
Calendar arithmetic happens on local dates in the given zone (so a DST change cannot shift a
day boundary) and only the resulting bounds are converted to UTC (R-TIME-1).

A month, day or weekday named without a year or week ("in May", "on March 5", "on Friday")
is ambiguous: which May depends on what the sentence says. The caller says which way to look
(`prefer`): "future" for plans (the default), "past" for what already happened ("I moved to
Lisbon in May"), "nearest" when the sentence does not tell. "since May" always looks back.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

import attrs

from memory_core.domain.date_phrases import (
    PREFERENCES,
    SINCE_PREFIXES,
    UNTIL_PREFIXES,
    PhraseMatch,
    Prefer,
    match_phrases,
)
from memory_core.domain.errors import TemporalError
from memory_core.domain.temporal import (
    Interval,
    Precision,
    TemporalKind,
    TemporalMetadata,
    canonical_timezone,
    require_utc,
)

__all__ = [
    "Prefer",
    "ResolvedTime",
    "TimeExpression",
    "TimeRole",
    "find_time_expressions",
    "resolve",
]


class TimeRole(StrEnum):
    """What the phrase says about the claim's validity window."""

    POINT = "point"  # holds during the named period: both bounds
    SINCE = "since"  # valid from the period on: valid_from only
    UNTIL = "until"  # valid up to the period: valid_until only


@attrs.frozen(kw_only=True)
class ResolvedTime:
    """A phrase resolved to a half-open UTC interval with honest precision and confidence."""

    interval: Interval
    precision: Precision
    confidence: float
    role: TimeRole
    timezone: str

    def to_metadata(self, kind: TemporalKind) -> TemporalMetadata:
        return TemporalMetadata(
            kind=kind,
            interval=self.interval,
            precision=self.precision,
            timezone=self.timezone,
            confidence=self.confidence,
        )


@attrs.frozen(kw_only=True)
class TimeExpression:
    """One recognised phrase: its span `[start, end)` in the text and its resolution."""

    start: int
    end: int
    text: str
    resolved: ResolvedTime


def _to_utc(local: datetime, zone: ZoneInfo) -> datetime:
    # fold=0: an ambiguous wall time is its first occurrence; one in a gap maps past the gap,
    # which is where that local day (or hour) actually begins.
    return local.replace(tzinfo=zone).astimezone(UTC)


def _bounds(start: datetime, end: datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    start_utc, end_utc = _to_utc(start, zone), _to_utc(end, zone)
    while end_utc <= start_utc:
        # A skipped local day (Samoa, 2011-12-30) is empty; widen to the next day that exists.
        end += timedelta(days=1)
        end_utc = _to_utc(end, zone)
    return start_utc, end_utc


def _interval(found: PhraseMatch, zone: ZoneInfo) -> tuple[Interval, TimeRole]:
    period, prefix = found.period, found.prefix
    start, end = _bounds(period.start, period.end, zone)
    if prefix in SINCE_PREFIXES:
        return Interval(valid_from=end if prefix == "after" else start), TimeRole.SINCE
    if prefix in UNTIL_PREFIXES:
        # "until March 5" includes March 5: the half-open bound is the end of the period.
        return Interval(valid_until=start if prefix == "before" else end), TimeRole.UNTIL
    return Interval(valid_from=start, valid_until=end), TimeRole.POINT


def find_time_expressions(
    text: str, *, reference: datetime, timezone: str, prefer: Prefer = "future"
) -> tuple[TimeExpression, ...]:
    """Every date phrase in `text`, left to right, resolved against `reference` in `timezone`;
    a month, day or weekday without a year or week is the one `prefer` points to."""
    if prefer not in PREFERENCES:
        raise TemporalError("prefer", f"must be one of {', '.join(PREFERENCES)}")
    zone_name = canonical_timezone(timezone, "timezone")
    zone = ZoneInfo(zone_name)
    today = require_utc(reference, "reference").astimezone(zone).date()
    expressions = []
    for found in match_phrases(text, today, prefer):
        try:
            interval, role = _interval(found, zone)
        except OverflowError:
            continue  # a bound outside what an aware datetime can hold
        resolved = ResolvedTime(
            interval=interval,
            precision=found.period.precision,
            confidence=found.period.confidence,
            role=role,
            timezone=zone_name,
        )
        expressions.append(
            TimeExpression(
                start=found.start,
                end=found.end,
                text=text[found.start : found.end],
                resolved=resolved,
            )
        )
    return tuple(expressions)


def resolve(
    phrase_or_text: str, *, reference: datetime, timezone: str, prefer: Prefer = "future"
) -> ResolvedTime | None:
    """The first date phrase in `phrase_or_text`, resolved; None when there is none."""
    found = find_time_expressions(
        phrase_or_text, reference=reference, timezone=timezone, prefer=prefer
    )
    return found[0].resolved if found else None
