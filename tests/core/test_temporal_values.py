"""Temporal values: half-open intervals, precision, zones, closed kinds (R-TIME-1, R-TIME-2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.errors import TemporalError, ValidationError
from memory_core.domain.temporal import (
    ATEMPORAL,
    Interval,
    Precision,
    Relation,
    TemporalKind,
    TemporalMetadata,
    canonical_timezone,
    require_utc,
)

START = datetime(2026, 3, 1, tzinfo=UTC)
END = datetime(2026, 4, 1, tzinfo=UTC)
TICK = timedelta(microseconds=1)


def state(**overrides: object) -> TemporalMetadata:
    fields: dict[str, object] = {
        "kind": TemporalKind.STATE,
        "interval": Interval(valid_from=START, valid_until=END),
        "precision": Precision.DAY,
        "timezone": "Europe/Berlin",
        "confidence": 0.9,
    }
    fields.update(overrides)
    return TemporalMetadata(**fields)  # type: ignore[arg-type]


# --- half-open interval ----------------------------------------------------------------------


def test_instant_at_valid_from_is_current() -> None:
    """R-TIME-1: the lower bound is inclusive."""
    assert Interval(valid_from=START, valid_until=END).relation(START) is Relation.CURRENT


def test_instant_just_before_valid_from_is_future() -> None:
    """R-TIME-1: before the lower bound the interval has not started."""
    assert Interval(valid_from=START, valid_until=END).relation(START - TICK) is Relation.FUTURE


def test_instant_exactly_at_valid_until_is_expired() -> None:
    """R-TIME-1: the upper bound is exclusive, so the boundary instant is already expired."""
    interval = Interval(valid_from=START, valid_until=END)
    assert interval.relation(END) is Relation.EXPIRED
    assert interval.relation(END - TICK) is Relation.CURRENT
    assert not interval.contains(END)


def test_interval_without_bounds_is_undated() -> None:
    """R-TIME-1: both bounds unknown means undated, whatever the instant."""
    interval = Interval()
    assert interval.is_undated
    assert interval.relation(START) is Relation.UNDATED


def test_open_ended_intervals_relate_on_their_known_bound() -> None:
    """R-TIME-1: either bound may be unknown; the known one still decides."""
    since = Interval(valid_from=START)
    until = Interval(valid_until=END)
    assert since.relation(START - TICK) is Relation.FUTURE
    assert since.relation(END + timedelta(days=9_000)) is Relation.CURRENT
    assert until.relation(END) is Relation.EXPIRED
    assert until.relation(START - timedelta(days=9_000)) is Relation.CURRENT


@pytest.mark.parametrize(
    ("other", "overlaps"),
    [
        (Interval(valid_from=START - TICK, valid_until=START + TICK), True),
        (Interval(valid_from=END - TICK, valid_until=END + TICK), True),
        (Interval(valid_from=END, valid_until=END + TICK), False),  # half-open: END is out
        (Interval(valid_from=START - TICK, valid_until=START), False),
        (Interval(valid_from=END - TICK), True),  # an open end reaches into the period
        (Interval(valid_until=START + TICK), True),
        (Interval(valid_until=START), False),
        (Interval(), False),  # undated says nothing about when
    ],
)
def test_overlap_is_half_open_and_undated_overlaps_nothing(other: Interval, overlaps: bool) -> None:
    """R-TIME-1: a period and a validity window overlap when they share an instant."""
    period = Interval(valid_from=START, valid_until=END)
    assert period.overlaps(other) is overlaps
    assert other.overlaps(period) is overlaps


@pytest.mark.parametrize("until", [START, START - TICK], ids=["empty", "inverted"])
def test_interval_must_not_be_empty_or_inverted(until: datetime) -> None:
    """R-TIME-1: [from, until) needs from < until."""
    with pytest.raises(TemporalError) as caught:
        Interval(valid_from=START, valid_until=until)
    assert caught.value.field == "temporal.valid_until"


def test_aware_bounds_in_other_zones_are_stored_as_utc() -> None:
    """R-TIME-1: instants are UTC; the zone is kept separately on the metadata."""
    tokyo = datetime(2026, 3, 1, 9, tzinfo=ZoneInfo("Asia/Tokyo"))
    interval = Interval(valid_from=tokyo)
    assert interval.valid_from == datetime(2026, 3, 1, 0, tzinfo=UTC)
    assert interval.valid_from is not None
    assert interval.valid_from.tzinfo is UTC


@pytest.mark.parametrize("field", ["valid_from", "valid_until"])
def test_naive_bounds_are_rejected_naming_the_field(field: str) -> None:
    """R-TIME-1: a naive datetime is never guessed into a zone."""
    with pytest.raises(TemporalError) as caught:
        Interval(**{field: datetime(2026, 3, 1)})  # type: ignore[arg-type]
    assert caught.value.field == f"temporal.{field}"


def test_naive_now_is_rejected() -> None:
    """R-TIME-1: the reference instant must be aware too."""
    with pytest.raises(TemporalError) as caught:
        Interval(valid_from=START).relation(datetime(2026, 3, 1))
    assert caught.value.field == "now"


def test_non_datetime_bound_is_rejected() -> None:
    """R-DOM-4: a wrong type is a typed error naming the field, not an AttributeError."""
    with pytest.raises(TemporalError) as caught:
        Interval(valid_from="2026-03-01")  # type: ignore[arg-type]
    assert caught.value.field == "temporal.valid_from"


def test_require_utc_converts_aware_values() -> None:
    """R-TIME-1: any aware datetime becomes the same instant in UTC."""
    value = datetime(2026, 3, 1, 1, tzinfo=timezone(timedelta(hours=1)))
    assert require_utc(value, "x") == datetime(2026, 3, 1, tzinfo=UTC)
    assert require_utc(value, "x").tzinfo is UTC


class _Instant(datetime):
    """A datetime subclass, as some drivers return."""


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 3, 1, 9, tzinfo=UTC),
        _Instant(2026, 3, 1, 9, tzinfo=UTC),
        datetime(2026, 3, 1, 9, tzinfo=timezone(timedelta(0))),
        datetime(2026, 3, 1, 9, tzinfo=ZoneInfo("UTC")),
        datetime(2026, 3, 1, 9, tzinfo=timezone(timedelta(hours=-5))),
        datetime.max.replace(tzinfo=UTC),
    ],
    ids=repr,
)
def test_require_utc_gives_what_astimezone_gives(value: datetime) -> None:
    """The shortcut for a value already in UTC returns what the conversion would."""
    converted = value.astimezone(UTC)
    result = require_utc(value, "x")
    assert (result, type(result), result.tzinfo) == (converted, type(converted), UTC)


# --- metadata --------------------------------------------------------------------------------


def test_temporal_kinds_are_the_closed_set() -> None:
    """R-TIME-2: exactly state, event, plan, recurring and atemporal."""
    assert {kind.value for kind in TemporalKind} == {
        "atemporal",
        "state",
        "event",
        "plan",
        "recurring",
    }


def test_unknown_kind_is_a_typed_error_naming_the_field() -> None:
    """R-TIME-2: a kind outside the closed set is rejected as a TemporalError."""
    with pytest.raises(TemporalError) as caught:
        state(kind="rumour")
    assert caught.value.field == "temporal.kind"


def test_unknown_precision_is_a_typed_error_naming_the_field() -> None:
    """R-TIME-1: precision is a closed set too."""
    with pytest.raises(TemporalError) as caught:
        state(precision="fortnight")
    assert caught.value.field == "temporal.precision"


def test_precision_covers_the_spec_values() -> None:
    """R-TIME-1: instant, minute, hour, day, month, year, unknown are all representable."""
    names = {"instant", "minute", "hour", "day", "month", "year", "unknown"}
    assert names <= {precision.value for precision in Precision}


@pytest.mark.parametrize("alias", ["exact", "EXACT", " exact "])
def test_exact_is_accepted_as_deepchats_name_for_instant(alias: str) -> None:
    """R-TIME-1: DeepChat rows say 'exact'; they load as `instant`."""
    assert Precision(alias) is Precision.INSTANT
    assert state(precision=alias).precision is Precision.INSTANT


def test_atemporal_default_carries_nothing() -> None:
    """R-TIME-2: atemporal metadata has no interval, precision, zone or confidence."""
    assert ATEMPORAL.is_atemporal
    assert ATEMPORAL.interval.is_undated
    assert (ATEMPORAL.precision, ATEMPORAL.timezone, ATEMPORAL.confidence) == (None, None, None)


@pytest.mark.parametrize(
    "extra",
    [
        {"interval": Interval(valid_from=START)},
        {"precision": Precision.DAY},
        {"timezone": "UTC"},
        {"confidence": 0.5},
    ],
    ids=["interval", "precision", "timezone", "confidence"],
)
def test_atemporal_with_any_other_field_is_rejected(extra: dict[str, object]) -> None:
    """R-TIME-2: atemporal must not smuggle temporal fields."""
    with pytest.raises(TemporalError) as caught:
        TemporalMetadata(kind=TemporalKind.ATEMPORAL, **extra)  # type: ignore[arg-type]
    assert caught.value.field == "temporal"


@pytest.mark.parametrize("missing", ["precision", "timezone", "confidence"])
@pytest.mark.parametrize("kind", ["state", "event", "plan", "recurring"])
def test_non_atemporal_requires_precision_zone_and_confidence(kind: str, missing: str) -> None:
    """R-TIME-1: every non-atemporal kind states precision, zone and temporal confidence."""
    with pytest.raises(TemporalError) as caught:
        state(kind=kind, **{missing: None})
    assert caught.value.field == f"temporal.{missing}"


def test_non_atemporal_may_be_undated() -> None:
    """R-TIME-1: a state with unknown bounds is valid (the policy qualifies it)."""
    metadata = state(interval=Interval())
    assert metadata.interval.is_undated
    assert not metadata.is_atemporal


@pytest.mark.parametrize("zone", ["Mars/Olympus", "", " UTC", "Europe/Berlin ", "x" * 200, 42])
def test_invalid_zone_is_rejected(zone: object) -> None:
    """R-TIME-1: the zone must be a real IANA name."""
    with pytest.raises(TemporalError) as caught:
        state(timezone=zone)
    assert caught.value.field == "temporal.timezone"


def test_canonical_timezone_names_the_given_field() -> None:
    """R-DOM-4: callers choose the field path the error reports."""
    assert canonical_timezone("Asia/Tokyo") == "Asia/Tokyo"
    with pytest.raises(TemporalError) as caught:
        canonical_timezone("Nowhere/Land", "clock.timezone")
    assert caught.value.field == "clock.timezone"


@pytest.mark.parametrize("confidence", [-0.01, 1.01, float("nan"), float("inf"), True, "0.5"])
def test_temporal_confidence_must_be_a_number_in_unit_range(confidence: object) -> None:
    """R-DOM-2: temporal confidence is its own number in [0, 1]."""
    with pytest.raises(TemporalError) as caught:
        state(confidence=confidence)
    assert caught.value.field == "temporal.confidence"


def test_temporal_error_is_a_validation_error() -> None:
    """R-DOM-4: callers may catch the whole validation family."""
    with pytest.raises(ValidationError):
        state(kind="nonsense")


def test_metadata_is_frozen() -> None:
    """R-DOM-4: values are immutable."""
    metadata = state()
    with pytest.raises(AttributeError):
        metadata.confidence = 0.1  # type: ignore[misc]


# --- property: exactly one relation ----------------------------------------------------------

_zones = st.sampled_from(
    [UTC, ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York"), ZoneInfo("Asia/Kolkata")]
)
_instants = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=_zones
)


@given(
    start=st.none() | _instants,
    end=st.none() | _instants,
    now=_instants,
)
def test_exactly_one_relation_holds_and_matches_the_inequalities(
    start: datetime | None, end: datetime | None, now: datetime
) -> None:
    """R-TIME-1: for any half-open interval and instant, one relation, as the inequalities say."""
    if start is not None and end is not None and not start < end:
        with pytest.raises(TemporalError):
            Interval(valid_from=start, valid_until=end)
        return
    interval = Interval(valid_from=start, valid_until=end)
    holds = {
        Relation.UNDATED: start is None and end is None,
        Relation.FUTURE: start is not None and now < start,
        Relation.EXPIRED: end is not None and now >= end,
        Relation.CURRENT: (start is not None or end is not None)
        and (start is None or start <= now)
        and (end is None or now < end),
    }
    assert sum(holds.values()) == 1
    assert holds[interval.relation(now)]
    assert interval.contains(now) is holds[Relation.CURRENT]
