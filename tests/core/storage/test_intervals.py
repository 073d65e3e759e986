"""Closing and reopening validity intervals once in the core (R-TIME-1, R-LINEAGE-1)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from storage_support import T0, state

from memory_core.domain.temporal import ATEMPORAL, Interval, TemporalMetadata
from memory_core.storage.intervals import closed_valid_until, closing_instant, reopened_temporal

NOW = T0 + timedelta(days=30)
_offsets = st.integers(min_value=-400, max_value=400).map(lambda days: T0 + timedelta(days=days))


def test_a_state_ends_where_its_dated_successor_starts() -> None:
    """R-TIME-1: Paris (from T0) superseded by Berlin from T0+10d ends at T0+10d."""
    berlin_start = T0 + timedelta(days=10)
    assert closing_instant(state(T0), state(berlin_start), NOW) == berlin_start


def test_an_undated_or_earlier_successor_closes_at_the_recording_time() -> None:
    assert closing_instant(state(T0), ATEMPORAL, NOW) == NOW
    assert closing_instant(state(T0), state(T0 - timedelta(days=1)), NOW) == NOW
    assert closing_instant(state(T0), state(T0), NOW) == NOW  # not later: now
    assert closing_instant(state(None), state(T0), NOW) == T0


@settings(deadline=None)  # a loaded machine must not fail a pure rule
@given(old_start=_offsets, successor_start=_offsets)
def test_the_closing_instant_is_the_successor_start_or_now(old_start, successor_start) -> None:  # type: ignore[no-untyped-def]
    ends = closing_instant(state(old_start), state(successor_start), NOW)
    assert ends == (successor_start if successor_start > old_start else NOW)


def test_an_open_state_is_closed_and_a_shorter_one_keeps_its_end() -> None:
    ends = T0 + timedelta(days=5)
    assert closed_valid_until(state(T0), ends) == ends
    assert closed_valid_until(state(T0, T0 + timedelta(days=2)), ends) == T0 + timedelta(days=2)
    assert closed_valid_until(state(T0, T0 + timedelta(days=9)), ends) == ends


def test_a_state_starting_at_or_after_the_end_and_other_kinds_are_untouched() -> None:
    assert closed_valid_until(state(T0), T0) is None  # would be an empty interval
    event = TemporalMetadata(
        kind="event",  # type: ignore[arg-type]
        interval=Interval(valid_from=T0),
        precision="day",  # type: ignore[arg-type]
        timezone="UTC",
        confidence=0.9,
    )
    assert closed_valid_until(event, NOW) is None
    assert closed_valid_until(ATEMPORAL, NOW) is None


@settings(deadline=None)  # a loaded machine must not fail a pure rule
@given(start=_offsets, ends=_offsets)
def test_a_closed_interval_is_never_empty_or_longer(start, ends) -> None:  # type: ignore[no-untyped-def]
    until = closed_valid_until(state(start), ends)
    if until is not None:
        assert until > start and until == ends
        Interval(valid_from=start, valid_until=until)  # a valid interval, not only a tuple


def test_a_revived_row_takes_the_drafts_dated_reading() -> None:
    dated = state(T0 + timedelta(days=40))
    assert reopened_temporal(state(T0, T0 + timedelta(days=3)), dated, NOW) == dated


def test_an_undated_revival_reopens_a_state_from_now_and_keeps_other_kinds() -> None:
    reopened = reopened_temporal(state(T0, T0 + timedelta(days=3)), ATEMPORAL, NOW)
    assert reopened.interval == Interval(valid_from=NOW)
    assert (reopened.kind, reopened.timezone, reopened.confidence) == ("state", "UTC", 0.9)
    assert reopened_temporal(ATEMPORAL, ATEMPORAL, NOW) is ATEMPORAL
