"""Date phrases resolved against a reference instant in an IANA zone (R-TIME-1, rules extractor)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import get_args
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.date_phrases import (
    CONFIDENCE_EXPLICIT,
    CONFIDENCE_INFERRED_YEAR,
    CONFIDENCE_LOOSE,
    CONFIDENCE_RELATIVE,
    CONFIDENCE_VAGUE,
)
from memory_core.domain.dates import (
    Prefer,
    ResolvedTime,
    TimeRole,
    find_time_expressions,
    resolve,
)
from memory_core.domain.errors import TemporalError
from memory_core.domain.temporal import Interval, Precision, TemporalKind

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
# Monday 2026-11-30, mid-morning in Berlin (CET, UTC+1).
REFERENCE = datetime(2026, 11, 30, 10, 30, tzinfo=BERLIN)


def berlin(year: int, month: int, day: int, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=BERLIN)


def resolved(
    phrase: str, reference: datetime = REFERENCE, zone: str = "Europe/Berlin"
) -> ResolvedTime:
    result = resolve(phrase, reference=reference, timezone=zone)
    assert result is not None, phrase
    return result


def resolved_with(phrase: str, reference: datetime, prefer: Prefer) -> ResolvedTime:
    result = resolve(phrase, reference=reference, timezone="Europe/Berlin", prefer=prefer)
    assert result is not None, phrase
    return result


def test_reference_is_a_monday() -> None:
    """The table below assumes the reference falls on a Monday."""
    assert REFERENCE.strftime("%A") == "Monday"


D, W, M, Y, H = Precision.DAY, Precision.WEEK, Precision.MONTH, Precision.YEAR, Precision.HOUR
POINT, SINCE, UNTIL = TimeRole.POINT, TimeRole.SINCE, TimeRole.UNTIL

# phrase -> (valid_from, valid_until, precision, role, confidence), in Berlin wall time.
CASES: dict[str, tuple[datetime | None, datetime | None, Precision, TimeRole, float]] = {
    "today": (berlin(2026, 11, 30), berlin(2026, 12, 1), D, POINT, CONFIDENCE_RELATIVE),
    "tonight": (berlin(2026, 11, 30, 18), berlin(2026, 12, 1), H, POINT, CONFIDENCE_LOOSE),
    "tomorrow": (berlin(2026, 12, 1), berlin(2026, 12, 2), D, POINT, CONFIDENCE_RELATIVE),
    "yesterday": (berlin(2026, 11, 29), berlin(2026, 11, 30), D, POINT, CONFIDENCE_RELATIVE),
    "this week": (berlin(2026, 11, 30), berlin(2026, 12, 7), W, POINT, CONFIDENCE_LOOSE),
    "next week": (berlin(2026, 12, 7), berlin(2026, 12, 14), W, POINT, CONFIDENCE_LOOSE),
    "last week": (berlin(2026, 11, 23), berlin(2026, 11, 30), W, POINT, CONFIDENCE_LOOSE),
    "this month": (berlin(2026, 11, 1), berlin(2026, 12, 1), M, POINT, CONFIDENCE_LOOSE),
    "next month": (berlin(2026, 12, 1), berlin(2027, 1, 1), M, POINT, CONFIDENCE_VAGUE),
    "last month": (berlin(2026, 10, 1), berlin(2026, 11, 1), M, POINT, CONFIDENCE_VAGUE),
    "this year": (berlin(2026, 1, 1), berlin(2027, 1, 1), Y, POINT, CONFIDENCE_LOOSE),
    "next year": (berlin(2027, 1, 1), berlin(2028, 1, 1), Y, POINT, CONFIDENCE_VAGUE),
    "last year": (berlin(2025, 1, 1), berlin(2026, 1, 1), Y, POINT, CONFIDENCE_VAGUE),
    "on Friday": (berlin(2026, 12, 4), berlin(2026, 12, 5), D, POINT, CONFIDENCE_RELATIVE),
    "on Monday": (berlin(2026, 12, 7), berlin(2026, 12, 8), D, POINT, CONFIDENCE_RELATIVE),
    "next Friday": (berlin(2026, 12, 11), berlin(2026, 12, 12), D, POINT, CONFIDENCE_LOOSE),
    "last Friday": (berlin(2026, 11, 27), berlin(2026, 11, 28), D, POINT, CONFIDENCE_RELATIVE),
    "last Monday": (berlin(2026, 11, 23), berlin(2026, 11, 24), D, POINT, CONFIDENCE_RELATIVE),
    "this Sunday": (berlin(2026, 12, 6), berlin(2026, 12, 7), D, POINT, CONFIDENCE_RELATIVE),
    "in 3 days": (berlin(2026, 12, 3), berlin(2026, 12, 4), D, POINT, CONFIDENCE_RELATIVE),
    "in two weeks": (berlin(2026, 12, 14), berlin(2026, 12, 21), W, POINT, CONFIDENCE_LOOSE),
    "in a month": (berlin(2026, 12, 1), berlin(2027, 1, 1), M, POINT, CONFIDENCE_VAGUE),
    "in twelve months": (berlin(2027, 11, 1), berlin(2027, 12, 1), M, POINT, CONFIDENCE_VAGUE),
    "in 2 years": (berlin(2028, 1, 1), berlin(2029, 1, 1), Y, POINT, CONFIDENCE_VAGUE),
    "5 days from now": (berlin(2026, 12, 5), berlin(2026, 12, 6), D, POINT, CONFIDENCE_RELATIVE),
    "two days ago": (berlin(2026, 11, 28), berlin(2026, 11, 29), D, POINT, CONFIDENCE_RELATIVE),
    "three weeks ago": (berlin(2026, 11, 9), berlin(2026, 11, 16), W, POINT, CONFIDENCE_LOOSE),
    "eleven months ago": (berlin(2025, 12, 1), berlin(2026, 1, 1), M, POINT, CONFIDENCE_VAGUE),
    "in 2023": (berlin(2023, 1, 1), berlin(2024, 1, 1), Y, POINT, CONFIDENCE_EXPLICIT),
    "since 2023": (berlin(2023, 1, 1), None, Y, SINCE, CONFIDENCE_EXPLICIT),
    "after 2023": (berlin(2024, 1, 1), None, Y, SINCE, CONFIDENCE_EXPLICIT),
    "since March": (berlin(2026, 3, 1), None, M, SINCE, CONFIDENCE_INFERRED_YEAR),
    "since December": (berlin(2025, 12, 1), None, M, SINCE, CONFIDENCE_INFERRED_YEAR),
    "since last week": (berlin(2026, 11, 23), None, W, SINCE, CONFIDENCE_LOOSE),
    "since Friday": (berlin(2026, 11, 27), None, D, SINCE, CONFIDENCE_RELATIVE),
    "until March 5": (None, berlin(2027, 3, 6), D, UNTIL, CONFIDENCE_INFERRED_YEAR),
    "until 5 March 2027": (None, berlin(2027, 3, 6), D, UNTIL, CONFIDENCE_EXPLICIT),
    "till tomorrow": (None, berlin(2026, 12, 2), D, UNTIL, CONFIDENCE_RELATIVE),
    "by June": (None, berlin(2027, 7, 1), M, UNTIL, CONFIDENCE_INFERRED_YEAR),
    "before June": (None, berlin(2027, 6, 1), M, UNTIL, CONFIDENCE_INFERRED_YEAR),
    "on March 5th": (berlin(2027, 3, 5), berlin(2027, 3, 6), D, POINT, CONFIDENCE_INFERRED_YEAR),
    "on the 5th of March": (
        berlin(2027, 3, 5), berlin(2027, 3, 6), D, POINT, CONFIDENCE_INFERRED_YEAR
    ),
    "on December 1st": (
        berlin(2026, 12, 1), berlin(2026, 12, 2), D, POINT, CONFIDENCE_INFERRED_YEAR
    ),
    "March 5, 2025": (berlin(2025, 3, 5), berlin(2025, 3, 6), D, POINT, CONFIDENCE_EXPLICIT),
    "2027-03-05": (berlin(2027, 3, 5), berlin(2027, 3, 6), D, POINT, CONFIDENCE_EXPLICIT),
    "in March": (berlin(2027, 3, 1), berlin(2027, 4, 1), M, POINT, CONFIDENCE_INFERRED_YEAR),
    "in November": (berlin(2026, 11, 1), berlin(2026, 12, 1), M, POINT, CONFIDENCE_INFERRED_YEAR),
    "in March 2025": (berlin(2025, 3, 1), berlin(2025, 4, 1), M, POINT, CONFIDENCE_EXPLICIT),
    "from March 5 until March 9": (
        berlin(2027, 3, 5), berlin(2027, 3, 10), D, POINT, CONFIDENCE_INFERRED_YEAR
    ),
    "since 2023 until next month": (
        berlin(2023, 1, 1), berlin(2027, 1, 1), Y, POINT, CONFIDENCE_VAGUE
    ),
}  # fmt: skip


@pytest.mark.parametrize("phrase", list(CASES))
def test_phrase_resolves_to_the_expected_local_period(phrase: str) -> None:
    """R-TIME-1: half-open interval computed on Berlin dates, stored as UTC, honest precision."""
    start, end, precision, role, confidence = CASES[phrase]
    result = resolved(phrase)
    assert result.interval == Interval(valid_from=start, valid_until=end)
    assert (result.precision, result.role, result.confidence) == (precision, role, confidence)
    assert result.timezone == "Europe/Berlin"


@pytest.mark.parametrize("phrase", ["TOMORROW", "Next Week", "IN MARCH", "Since 2023"])
def test_phrases_are_case_insensitive(phrase: str) -> None:
    """Users do not write in lowercase."""
    assert resolved(phrase) == resolved(phrase.lower())


@pytest.mark.parametrize(
    "text",
    [
        "Project Atlas uses pnpm workspaces.",
        "The build took 2023 ms.",  # a four-digit number alone is no year
        "may 5 people join the call?",  # lowercase 'may' without a preposition is the verb
        "They march on.",
        "Meet on 2027-02-30.",  # no such day
        "Meet on February 30th.",
        "Meet on February 30th, 2027.",
    ],
)
def test_text_without_a_date_phrase_resolves_to_nothing(text: str) -> None:
    """Unrecognised or impossible dates are not guessed."""
    assert resolve(text, reference=REFERENCE, timezone="Europe/Berlin") is None


def test_a_number_too_large_for_a_day_leaves_the_month_reading() -> None:
    """'in March 40 people came' is about March, not day 40."""
    assert resolved("in March 40 people came") == resolved("in March")


def test_capitalised_may_with_a_day_is_a_date() -> None:
    """'May 5' is the month when written as a date."""
    assert resolved("See you May 5").interval.valid_from == berlin(2027, 5, 5)


def test_find_time_expressions_returns_spans_left_to_right() -> None:
    """The rules extractor gets every phrase with its span in the text."""
    text = "Lives in Berlin since 2023, stays until March 5, and flies to Oslo tomorrow."
    found = find_time_expressions(text, reference=REFERENCE, timezone="Europe/Berlin")
    assert [(e.text, e.resolved.role) for e in found] == [
        ("since 2023", SINCE),
        ("until March 5", UNTIL),
        ("tomorrow", POINT),
    ]
    assert all(text[e.start : e.end] == e.text for e in found)


def test_longest_phrase_wins_over_its_parts() -> None:
    """'until 5 March 2027' is one phrase, not '5 March' plus 'in 2027'."""
    found = find_time_expressions(
        "valid until 5 March 2027", reference=REFERENCE, timezone="Europe/Berlin"
    )
    assert [e.text for e in found] == ["until 5 March 2027"]


def test_resolve_takes_the_first_phrase_of_a_text() -> None:
    """resolve() is the first of find_time_expressions()."""
    assert resolved("yesterday and tomorrow") == resolved("yesterday")


def test_resolution_builds_temporal_metadata() -> None:
    """R-TIME-1: the resolution carries everything a non-atemporal claim must state."""
    metadata = resolved("next week").to_metadata(TemporalKind.PLAN)
    assert metadata.kind is TemporalKind.PLAN
    assert metadata.precision is Precision.WEEK
    assert (metadata.timezone, metadata.confidence) == ("Europe/Berlin", CONFIDENCE_LOOSE)


def test_the_zone_decides_which_day_today_is() -> None:
    """R-TIME-1: 23:30 UTC on the 30th is already 1 December in Tokyo."""
    late = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)
    tokyo = resolved("today", late, "Asia/Tokyo")
    assert tokyo.interval.valid_from == datetime(2026, 12, 1, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert resolved("today", late, "UTC").interval.valid_from == datetime(2026, 11, 30, tzinfo=UTC)


def test_naive_reference_is_rejected() -> None:
    """R-TIME-1: no guessing the reference's zone."""
    with pytest.raises(TemporalError) as caught:
        resolve("tomorrow", reference=datetime(2026, 11, 30), timezone="Europe/Berlin")
    assert caught.value.field == "reference"


def test_unknown_zone_is_rejected() -> None:
    """R-TIME-1: the zone must be a real IANA name."""
    with pytest.raises(TemporalError) as caught:
        resolve("tomorrow", reference=REFERENCE, timezone="Mars/Olympus")
    assert caught.value.field == "timezone"


# --- direction: a month, day or weekday without a year or week ---------------------------------

# phrase -> its bound (valid_until for "until" and "by", else valid_from) looking forward, back
# and to the nearer one, said on Monday 2026-11-30 in Berlin.
DIRECTIONS: dict[str, tuple[datetime, datetime, datetime]] = {
    # May lies six months either way: a tie goes forward, as plans do.
    "in May": (berlin(2027, 5, 1), berlin(2026, 5, 1), berlin(2027, 5, 1)),
    "in March": (berlin(2027, 3, 1), berlin(2026, 3, 1), berlin(2027, 3, 1)),
    "in September": (berlin(2027, 9, 1), berlin(2026, 9, 1), berlin(2026, 9, 1)),
    "in December": (berlin(2026, 12, 1), berlin(2025, 12, 1), berlin(2026, 12, 1)),
    "in November": (berlin(2026, 11, 1), berlin(2026, 11, 1), berlin(2026, 11, 1)),
    "on March 5": (berlin(2027, 3, 5), berlin(2026, 3, 5), berlin(2027, 3, 5)),
    "on the 2nd of November": (berlin(2027, 11, 2), berlin(2026, 11, 2), berlin(2026, 11, 2)),
    "on November 30": (berlin(2026, 11, 30), berlin(2026, 11, 30), berlin(2026, 11, 30)),
    "on Friday": (berlin(2026, 12, 4), berlin(2026, 11, 27), berlin(2026, 11, 27)),
    "on Wednesday": (berlin(2026, 12, 2), berlin(2026, 11, 25), berlin(2026, 12, 2)),
    "on Monday": (berlin(2026, 12, 7), berlin(2026, 11, 23), berlin(2026, 11, 30)),
    "since March": (berlin(2026, 3, 1), berlin(2026, 3, 1), berlin(2026, 3, 1)),
    "since December": (berlin(2025, 12, 1), berlin(2025, 12, 1), berlin(2025, 12, 1)),
    "since Friday": (berlin(2026, 11, 27), berlin(2026, 11, 27), berlin(2026, 11, 27)),
    "after March": (berlin(2027, 4, 1), berlin(2026, 4, 1), berlin(2027, 4, 1)),
    "until March 5": (berlin(2027, 3, 6), berlin(2026, 3, 6), berlin(2027, 3, 6)),
    "by June": (berlin(2027, 7, 1), berlin(2026, 7, 1), berlin(2026, 7, 1)),
}  # fmt: skip


def _bound(result: ResolvedTime) -> datetime | None:
    interval = result.interval
    return interval.valid_until if result.role is TimeRole.UNTIL else interval.valid_from


@pytest.mark.parametrize("phrase", list(DIRECTIONS))
def test_a_yearless_phrase_goes_the_preferred_way(phrase: str) -> None:
    """R-TIME-1: "in May" said in November is next May for a plan, this May for what already
    happened, and the nearer May when the sentence does not say; "since" always looks back."""
    preferences: tuple[Prefer, ...] = ("future", "past", "nearest")
    for prefer, bound in zip(preferences, DIRECTIONS[phrase], strict=True):
        assert _bound(resolved_with(phrase, REFERENCE, prefer)) == bound, prefer


@pytest.mark.parametrize("phrase", ["in May", "on Friday", "on March 5", "until March 5"])
def test_the_default_direction_is_forward(phrase: str) -> None:
    """Plans were the first users of the resolver: without a hint it keeps looking forward."""
    future = resolve(phrase, reference=REFERENCE, timezone="Europe/Berlin", prefer="future")
    assert resolved(phrase) == future


def test_a_range_said_in_the_past_tense_lies_in_the_past() -> None:
    """R-TIME-1: both ends of "from March 5 until March 9" take the same direction."""
    result = resolve(
        "from March 5 until March 9",
        reference=REFERENCE,
        timezone="Europe/Berlin",
        prefer="past",
    )
    assert result is not None
    assert result.interval == Interval(
        valid_from=berlin(2026, 3, 5), valid_until=berlin(2026, 3, 10)
    )


def test_nearest_reads_february_29_from_the_year_that_has_one() -> None:
    """Said on 2027-06-10, the last 29 February would be in 2027, which has none: the nearest
    real one is 2028's; looking back finds nothing rather than guessing."""
    reference = datetime(2027, 6, 10, 12, tzinfo=BERLIN)
    result = resolved_with("on February 29", reference, "nearest")
    assert result.interval.valid_from == berlin(2028, 2, 29)
    past = resolve("on February 29", reference=reference, timezone="Europe/Berlin", prefer="past")
    assert past is None


def test_an_unknown_direction_is_rejected_naming_the_field() -> None:
    """R-DOM-4: a typed error naming the field, not a silent default."""
    with pytest.raises(TemporalError) as caught:
        resolve("in May", reference=REFERENCE, timezone="Europe/Berlin", prefer="later")  # type: ignore[arg-type]
    assert caught.value.field == "prefer"


# Phrases that name their own year, week or offset: the direction cannot change them.
_ANCHORED = [
    "today", "tomorrow", "yesterday", "next week", "last month", "this year", "last Friday",
    "next Friday", "this Sunday", "in 3 days", "two days ago", "in March 2025", "2027-03-05",
    "in 2023", "March 5, 2025",
]  # fmt: skip
_YEARLESS = [
    "in May", "in January", "in December", "on March 5", "on the 29th of February", "on Friday",
    "on Sunday", "on December 31st",
]  # fmt: skip
_REFERENCES = st.datetimes(
    min_value=datetime(1950, 1, 1), max_value=datetime(2150, 1, 1), timezones=st.just(UTC)
)


@given(
    reference=_REFERENCES,
    zone=st.sampled_from(["UTC", "Europe/Berlin", "Pacific/Kiritimati", "America/St_Johns"]),
    phrase=st.sampled_from(_ANCHORED),
    prefer=st.sampled_from(get_args(Prefer)),
)
def test_anchored_phrases_ignore_the_direction(
    reference: datetime, zone: str, phrase: str, prefer: Prefer
) -> None:
    """R-TIME-1: "last Friday" and "in March 2025" mean the same whatever the sentence's tense."""
    assert resolve(phrase, reference=reference, timezone=zone, prefer=prefer) == resolve(
        phrase, reference=reference, timezone=zone
    )


@given(
    reference=_REFERENCES,
    zone=st.sampled_from(["UTC", "Europe/Berlin", "Pacific/Kiritimati", "America/St_Johns"]),
    phrase=st.sampled_from(_YEARLESS),
)
def test_past_starts_by_the_reference_and_future_ends_after_it(
    reference: datetime, zone: str, phrase: str
) -> None:
    """R-TIME-1: the past reading has begun by the reference instant, the future reading has
    not ended by it, and the nearest reading is one of the two — or today itself."""
    past, future, nearest = (
        resolve(phrase, reference=reference, timezone=zone, prefer=prefer)
        for prefer in ("past", "future", "nearest")
    )
    if past is not None:
        assert past.interval.valid_from is not None
        assert past.interval.valid_from <= reference
    if future is not None:
        assert future.interval.valid_until is not None
        assert future.interval.valid_until > reference
    if nearest is not None:
        assert nearest in (past, future) or nearest.interval.contains(reference)
    else:  # only an impossible day has no reading at all
        assert (past, future) == (None, None) and "February" in phrase


# --- DST ---------------------------------------------------------------------------------------


def _hours(result: ResolvedTime) -> float:
    start, end = result.interval.valid_from, result.interval.valid_until
    assert start is not None and end is not None
    return (end - start) / timedelta(hours=1)


def test_tomorrow_across_spring_forward_is_a_23_hour_day() -> None:
    """R-TIME-1: day bounds are local midnights, so the DST day is 23 h (New York, 2026-03-08)."""
    result = resolved("tomorrow", datetime(2026, 3, 7, 12, tzinfo=NEW_YORK), "America/New_York")
    assert result.interval.valid_from == datetime(2026, 3, 8, 5, tzinfo=UTC)
    assert result.interval.valid_until == datetime(2026, 3, 9, 4, tzinfo=UTC)
    assert _hours(result) == 23


def test_tomorrow_across_fall_back_is_a_25_hour_day() -> None:
    """R-TIME-1: New York, 2026-11-01 is 25 h long."""
    result = resolved("tomorrow", datetime(2026, 10, 31, 12, tzinfo=NEW_YORK), "America/New_York")
    assert result.interval.valid_from == datetime(2026, 11, 1, 4, tzinfo=UTC)
    assert _hours(result) == 25


def test_next_week_across_a_dst_change_starts_and_ends_at_local_midnight() -> None:
    """R-TIME-1: the week of 2026-03-02 in New York spans the change; bounds stay at midnight."""
    reference = datetime(2026, 2, 26, 9, tzinfo=NEW_YORK)
    result = resolved("next week", reference, "America/New_York")
    assert result.interval.valid_from == datetime(2026, 3, 2, tzinfo=NEW_YORK)
    assert result.interval.valid_until == datetime(2026, 3, 9, tzinfo=NEW_YORK)
    assert _hours(result) == 7 * 24 - 1
    week_after = resolved("in two weeks", reference, "America/New_York")
    assert week_after.interval.valid_from == datetime(2026, 3, 9, tzinfo=NEW_YORK)
    assert _hours(week_after) == 7 * 24


def test_a_skipped_local_day_never_yields_an_empty_interval() -> None:
    """R-TIME-1: Samoa skipped 2011-12-30; 'tomorrow' from the 29th is still a valid interval."""
    reference = datetime(2011, 12, 29, 12, tzinfo=ZoneInfo("Pacific/Apia"))
    result = resolved("tomorrow", reference, "Pacific/Apia")
    assert _hours(result) > 0


# --- properties --------------------------------------------------------------------------------

_ZONES = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Tokyo",
    "Asia/Kolkata",
    "Australia/Lord_Howe",  # half-hour DST
    "America/St_Johns",
    "Pacific/Apia",  # skipped a whole day
    "Pacific/Kiritimati",  # UTC+14
    "America/Sao_Paulo",  # historical DST at midnight
]
_PHRASES = [*CASES, "Friday", "this Friday", "in ten days", "an hour ago or two weeks ago"]


@given(
    reference=st.datetimes(
        min_value=datetime(1950, 1, 1), max_value=datetime(2150, 1, 1), timezones=st.just(UTC)
    ),
    zone=st.sampled_from(_ZONES),
    phrase=st.sampled_from(_PHRASES),
)
def test_resolved_intervals_are_valid_half_open_utc(
    reference: datetime, zone: str, phrase: str
) -> None:
    """R-TIME-1: any supported phrase, any zone, any instant: UTC bounds, from < until."""
    result = resolve(phrase, reference=reference, timezone=zone)
    assert result is not None
    start, end = result.interval.valid_from, result.interval.valid_until
    assert start is not None or end is not None
    for bound in (start, end):
        assert bound is None or bound.tzinfo is UTC
    if start is not None and end is not None:
        assert start < end
    shape = {TimeRole.POINT: (True, True), TimeRole.SINCE: (True, False)}
    assert (start is not None, end is not None) == shape.get(result.role, (False, True))


@given(
    reference=st.datetimes(
        min_value=datetime(1950, 1, 1), max_value=datetime(2150, 1, 1), timezones=st.just(UTC)
    ),
    zone=st.sampled_from(_ZONES),
    phrase=st.sampled_from(["today", "this week", "this month", "this year"]),
)
def test_periods_named_this_contain_the_reference(
    reference: datetime, zone: str, phrase: str
) -> None:
    """R-TIME-1: 'today', 'this week', ... hold at the reference instant itself."""
    assert resolved(phrase, reference, zone).interval.contains(reference)


_TOKENS = [
    "since", "until", "by", "before", "after", "from", "to", "on", "in", "the", "of", "next",
    "last", "this", "ago", "now", "a", "two", "12", "31", "5th", "2023", "9999", "0001",
    "2027-03-05", "2027-13-01", "March", "may", "May", "Feb", "Friday", "week", "months",
    "year", "days", "today", "tonight", ",", "and", "Berlin", "0",
]  # fmt: skip


@given(
    words=st.lists(st.sampled_from(_TOKENS), max_size=12),
    reference=st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    zone=st.sampled_from(_ZONES),
)
def test_arbitrary_text_never_breaks_the_resolver(
    words: list[str], reference: datetime, zone: str
) -> None:
    """The rules extractor may feed any text: spans are ordered, disjoint and exact."""
    text = " ".join(words)
    found = find_time_expressions(text, reference=reference, timezone=zone)
    for earlier, later in pairwise(found):
        assert earlier.end <= later.start
    for expression in found:
        assert text[expression.start : expression.end] == expression.text
        interval = expression.resolved.interval
        if interval.valid_from is not None and interval.valid_until is not None:
            assert interval.valid_from < interval.valid_until
