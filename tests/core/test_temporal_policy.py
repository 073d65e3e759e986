"""How time affects recall: the reference §4.5 table, annotations, legacy rows (R-TIME-3/4)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.errors import TemporalError
from memory_core.domain.stored_temporal import lenient_normalise
from memory_core.domain.temporal import (
    ATEMPORAL,
    Interval,
    Precision,
    TemporalKind,
    TemporalMetadata,
)
from memory_core.domain.temporal_policy import (
    TemporalAssessment,
    TemporalMode,
    TemporalPolicy,
    TemporalStatus,
    WorkingSection,
    assess,
    assessor,
    render_bound,
    working_section_for,
    working_status_rank,
)
from memory_core.settings import MemorySettings

# DeepChat's own behaviour fixture (Apache-2.0, NOTICE beside it), vendored unchanged.
_FIXTURE = Path(__file__).parents[1] / "fixtures" / "deepchat" / "behavior-v1.json"

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)
PAST = Interval(valid_from=NOW - timedelta(days=60), valid_until=NOW - timedelta(days=30))
NOW_WINDOW = Interval(valid_from=NOW - timedelta(days=1), valid_until=NOW + timedelta(days=1))
FUTURE = Interval(valid_from=NOW + timedelta(days=30), valid_until=NOW + timedelta(days=60))
UNDATED = Interval()
WINDOW = "from 2026-04-16 until 2026-05-16 (UTC)"  # PAST rendered at day precision
AHEAD = "from 2026-07-15 until 2026-08-14 (UTC)"  # FUTURE rendered at day precision
AROUND = "from 2026-06-14 until 2026-06-16 (UTC)"  # NOW_WINDOW rendered at day precision


def meta(
    kind: str,
    interval: Interval,
    confidence: float = 0.95,
    precision: Precision = Precision.DAY,
    zone: str = "UTC",
) -> TemporalMetadata:
    return TemporalMetadata(
        kind=kind, interval=interval, precision=precision, timezone=zone, confidence=confidence
    )


# One row per line of the reference §4.5 table (current mode):
# (id, metadata, eligible, factor, status, label, qualified, annotation)
TABLE: list[tuple[str, TemporalMetadata, bool, float, TemporalStatus, str, bool, str]] = [
    ("state-current", meta("state", NOW_WINDOW), True, 1.0, TemporalStatus.CURRENT,
     "current state", False, f"[Temporal: current state; {AROUND}]"),
    ("state-expired-trusted", meta("state", PAST, 0.95), False, 0.0, TemporalStatus.EXPIRED,
     "expired state", False, f"[Temporal: expired state; {WINDOW}]"),
    ("state-expired-uncertain", meta("state", PAST, 0.6), True, 0.65, TemporalStatus.EXPIRED,
     "possibly outdated state", True,
     f"[Temporal: possibly outdated state; {WINDOW}; confidence 0.60]"),
    ("state-future-trusted", meta("state", FUTURE, 0.8), False, 0.0, TemporalStatus.FUTURE,
     "future state", False, f"[Temporal: future state; {AHEAD}]"),
    ("state-future-uncertain", meta("state", FUTURE, 0.79), True, 0.65, TemporalStatus.FUTURE,
     "possibly not yet effective state", True,
     f"[Temporal: possibly not yet effective state; {AHEAD}; confidence 0.79]"),
    ("state-undated", meta("state", UNDATED, 0.95), True, 0.9, TemporalStatus.UNDATED,
     "state with unspecified validity", True,
     "[Temporal: state with unspecified validity; validity window unspecified; "
     "confidence 0.95]"),
    ("event-past", meta("event", PAST), True, 1.0, TemporalStatus.HISTORICAL,
     "historical event", False, f"[Temporal: historical event; {WINDOW}]"),
    ("event-ongoing", meta("event", NOW_WINDOW), True, 1.0, TemporalStatus.HISTORICAL,
     "historical event", False, f"[Temporal: historical event; {AROUND}]"),
    ("event-future", meta("event", FUTURE), True, 1.0, TemporalStatus.FUTURE_EVENT,
     "future-dated event", False, f"[Temporal: future-dated event; {AHEAD}]"),
    ("plan-future", meta("plan", FUTURE), True, 1.0, TemporalStatus.PLANNED,
     "plan", False, f"[Temporal: plan; {AHEAD}]"),
    ("plan-undated", meta("plan", UNDATED), True, 1.0, TemporalStatus.PLANNED,
     "plan", False, "[Temporal: plan; validity window unspecified]"),
    ("plan-expired", meta("plan", PAST), True, 0.85, TemporalStatus.PREVIOUSLY_PLANNED,
     "previously planned", False, f"[Temporal: previously planned; {WINDOW}]"),
    ("recurring-current", meta("recurring", NOW_WINDOW), True, 1.0, TemporalStatus.RECURRING,
     "recurring", False, f"[Temporal: recurring; {AROUND}]"),
    ("recurring-future", meta("recurring", FUTURE), True, 1.0,
     TemporalStatus.FUTURE_RECURRENCE, "recurring; known window starts in the future", False,
     f"[Temporal: recurring; known window starts in the future; {AHEAD}]"),
    ("recurring-ended", meta("recurring", PAST), True, 0.9, TemporalStatus.ENDED_RECURRENCE,
     "recurring; known window ended", False,
     f"[Temporal: recurring; known window ended; {WINDOW}]"),
]  # fmt: skip


@pytest.mark.parametrize("row", TABLE, ids=[row[0] for row in TABLE])
def test_current_mode_follows_the_reference_table(row: tuple[Any, ...]) -> None:
    """R-TIME-3: high-confidence out-of-window states are excluded, low ones fail open."""
    _, metadata, eligible, factor, status, label, qualified, annotation = row
    assert assess(metadata, NOW, mode=TemporalMode.CURRENT) == TemporalAssessment(
        eligible=eligible,
        factor=factor,
        status=status,
        label=label,
        qualified=qualified,
        annotation=annotation,
    )


@pytest.mark.parametrize(
    ("metadata", "status", "label", "annotation"),
    [(row[1], row[4], row[5], row[7]) for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_evidence_mode_sees_everything_at_full_weight_with_the_same_labels(
    metadata: TemporalMetadata, status: TemporalStatus, label: str, annotation: str
) -> None:
    """R-TIME-3: decision/evidence retrieval sees everything; a time filter is never a delete."""
    verdict = assess(metadata, NOW, mode=TemporalMode.EVIDENCE)
    assert (verdict.eligible, verdict.factor) == (True, 1.0)
    assert (verdict.status, verdict.label, verdict.annotation) == (status, label, annotation)


def test_atemporal_claims_are_eligible_unweighted_and_unannotated() -> None:
    """R-TIME-3: the atemporal row of the table — no label, no annotation."""
    for mode in TemporalMode:
        verdict = assess(ATEMPORAL, NOW, mode=mode)
        assert verdict == TemporalAssessment(
            eligible=True,
            factor=1.0,
            status=TemporalStatus.ATEMPORAL,
            label=None,
            qualified=False,
            annotation=None,
        )


@pytest.mark.parametrize(("confidence", "eligible"), [(0.8, False), (0.7999, True)])
def test_hard_filter_applies_from_the_threshold_inclusive(
    confidence: float, eligible: bool
) -> None:
    """R-TIME-3: 'high confidence' means at least the hard-filter confidence (0.8)."""
    assert assess(meta("state", PAST, confidence), NOW).eligible is eligible


def test_state_is_expired_exactly_at_valid_until() -> None:
    """R-TIME-1/3: the half-open bound decides eligibility at the boundary instant."""
    metadata = meta("state", PAST, 0.95)
    assert PAST.valid_until is not None
    assert assess(metadata, PAST.valid_until).status is TemporalStatus.EXPIRED
    assert assess(metadata, PAST.valid_until - timedelta(microseconds=1)).eligible


def test_policy_thresholds_come_from_settings() -> None:
    """R-TIME-3: the hard-filter confidence and uncertain factor are tunable (SPEC §11)."""
    settings = MemorySettings(temporal_hard_filter_confidence=0.5, temporal_uncertain_factor=0.4)
    policy = TemporalPolicy.from_settings(settings)
    assert policy == TemporalPolicy(hard_filter_confidence=0.5, uncertain_factor=0.4)
    assert not assess(meta("state", PAST, 0.6), NOW, policy=policy).eligible
    assert assess(meta("state", PAST, 0.45), NOW, policy=policy).factor == 0.4


def test_default_policy_matches_the_reference_constants() -> None:
    """R-TIME-3: 0.8 / 0.65 / 0.9 / 0.85 / 0.9, and the defaults agree with the settings."""
    policy = TemporalPolicy()
    assert (
        policy.hard_filter_confidence,
        policy.uncertain_factor,
        policy.undated_factor,
        policy.previously_planned_factor,
        policy.ended_recurrence_factor,
    ) == (0.8, 0.65, 0.9, 0.85, 0.9)
    assert TemporalPolicy.from_settings(MemorySettings()) == policy


@pytest.mark.parametrize("value", [-0.1, 1.5, True])
def test_policy_rejects_factors_outside_unit_range(value: object) -> None:
    """R-DOM-4: an invalid policy names the field."""
    with pytest.raises(TemporalError) as caught:
        TemporalPolicy(undated_factor=value)  # type: ignore[arg-type]
    assert caught.value.field == "temporal_policy.undated_factor"


def test_naive_now_and_unknown_mode_are_rejected() -> None:
    """R-TIME-1: the reference instant is aware; the mode is one of two."""
    with pytest.raises(TemporalError):
        assess(meta("state", PAST), datetime(2026, 6, 15))
    with pytest.raises(TemporalError) as caught:
        assess(meta("state", PAST), NOW, mode="archive")  # type: ignore[arg-type]
    assert caught.value.field == "mode"


# --- annotation text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("interval", "phrase"),
    [
        (Interval(valid_from=datetime(2026, 1, 2, tzinfo=UTC)), "from 2026-01-02 (UTC)"),
        (Interval(valid_until=datetime(2026, 9, 2, tzinfo=UTC)), "until 2026-09-02 (UTC)"),
    ],
    ids=["from-only", "until-only"],
)
def test_annotation_renders_open_ended_intervals(interval: Interval, phrase: str) -> None:
    """R-TIME-3: 'from A (TZ)' and 'until B (TZ)' when one bound is unknown."""
    assert assess(meta("event", interval), NOW).annotation == (
        f"[Temporal: historical event; {phrase}]"
    )


def test_unknown_precision_is_marked_approximate_after_the_interval() -> None:
    """R-TIME-3: 'approximate' only for precision unknown, before the confidence."""
    metadata = meta("state", PAST, 0.6, precision=Precision.UNKNOWN, zone="Asia/Tokyo")
    assert assess(metadata, NOW).annotation == (
        "[Temporal: possibly outdated state; "
        "from 2026-04-16 21:00:00 until 2026-05-16 21:00:00 (Asia/Tokyo); "
        "approximate; confidence 0.60]"
    )


@pytest.mark.parametrize(("confidence", "text"), [(0.125, "0.13"), (0.5, "0.50"), (0.0, "0.00")])
def test_confidence_is_shown_with_two_decimals_as_javascript_rounds(
    confidence: float, text: str
) -> None:
    """R-TIME-3: the fixtures were written against toFixed(2) (half up on the exact value)."""
    annotation = assess(meta("state", UNDATED, confidence), NOW).annotation
    assert annotation is not None
    assert annotation.endswith(f"; confidence {text}]")


_INSTANT = datetime(2026, 8, 15, 18, 42, 7, tzinfo=UTC)  # 2026-08-16 03:42:07 in Tokyo


@pytest.mark.parametrize(
    ("precision", "utc", "tokyo"),
    [
        (Precision.YEAR, "2026", "2026"),
        (Precision.QUARTER, "2026-Q3", "2026-Q3"),
        (Precision.MONTH, "2026-08", "2026-08"),
        (Precision.WEEK, "2026-08-15", "2026-08-16"),
        (Precision.DAY, "2026-08-15", "2026-08-16"),
        (Precision.HOUR, "2026-08-15 18:00", "2026-08-16 03:00"),
        (Precision.MINUTE, "2026-08-15 18:42", "2026-08-16 03:42"),
        (Precision.INSTANT, "2026-08-15 18:42:07", "2026-08-16 03:42:07"),
        (Precision.UNKNOWN, "2026-08-15 18:42:07", "2026-08-16 03:42:07"),
    ],
)
def test_bounds_render_in_the_claims_zone_as_finely_as_the_precision(
    precision: Precision, utc: str, tokyo: str
) -> None:
    """R-TIME-1/3: rendering follows precision and the claim's IANA zone."""
    assert render_bound(_INSTANT, precision, "UTC") == utc
    assert render_bound(_INSTANT, precision, "Asia/Tokyo") == tokyo


def test_quarter_and_year_change_with_the_zone_at_a_year_boundary() -> None:
    """R-TIME-1: the same instant is Q4 2026 in New York and Q1 2027 in Tokyo."""
    instant = datetime(2026, 12, 31, 20, tzinfo=UTC)
    assert render_bound(instant, Precision.QUARTER, "America/New_York") == "2026-Q4"
    assert render_bound(instant, Precision.QUARTER, "Asia/Tokyo") == "2027-Q1"
    assert render_bound(instant, Precision.YEAR, "Asia/Tokyo") == "2027"


def test_annotation_of_a_tokyo_claim_names_the_zone() -> None:
    """R-TIME-3: the interval phrase ends with the claim's zone."""
    local = ZoneInfo("Asia/Tokyo")
    interval = Interval(
        valid_from=datetime(2027, 1, 1, tzinfo=local),
        valid_until=datetime(2027, 4, 1, tzinfo=local),
    )
    metadata = meta("plan", interval, precision=Precision.QUARTER, zone="Asia/Tokyo")
    assert assess(metadata, NOW).annotation == (
        "[Temporal: plan; from 2027-Q1 until 2027-Q2 (Asia/Tokyo)]"
    )


# --- DeepChat behaviour fixture --------------------------------------------------------------


def _fixture_scenario(scenario_id: str) -> tuple[datetime, dict[str, Any]]:
    document = json.loads(_FIXTURE.read_text(encoding="utf-8"))
    now = datetime.fromtimestamp(document["clock"]["now"] / 1000, tz=UTC)
    scenario = next(s for s in document["scenarios"] if s["id"] == scenario_id)
    return now, scenario


def _fixture_metadata(row: dict[str, Any]) -> TemporalMetadata:
    raw = row.get("temporal", {})
    metadata, corrupt = lenient_normalise(
        kind=raw.get("temporalKind"),
        valid_from=raw.get("validFrom"),
        valid_until=raw.get("validUntil"),
        confidence=raw.get("temporalConfidence"),
        precision=raw.get("temporalPrecision"),
        timezone=raw.get("temporalTimeZone"),
    )
    assert not corrupt
    return metadata


@pytest.mark.parametrize(
    "scenario_id", ["temporal-claim-interpretation", "correction-prefers-current-state"]
)
def test_deepchat_fixture_temporal_scenarios_select_and_annotate_as_the_reference(
    scenario_id: str,
) -> None:
    """R-TIME-3: behavior-v1.json at now = 2,000,000 ms UTC."""
    now, scenario = _fixture_scenario(scenario_id)
    assert now == datetime(1970, 1, 1, 0, 33, 20, tzinfo=UTC)
    verdicts = {row["id"]: assess(_fixture_metadata(row), now) for row in scenario["rows"]}
    expected = scenario["expected"]
    assert {i for i, v in verdicts.items() if v.eligible} == set(expected["selectedMemoryIds"])
    assert all(not verdicts[i].eligible for i in expected["excludedMemoryIds"])
    for memory_id, fragment in expected.get("annotationIncludes", {}).items():
        assert fragment in (verdicts[memory_id].annotation or "")


def test_deepchat_fixture_uncertain_state_is_downweighted_and_qualified() -> None:
    """R-TIME-3: the expired 0.6-confidence state fails open at factor 0.65."""
    now, scenario = _fixture_scenario("temporal-claim-interpretation")
    rows = {row["id"]: row for row in scenario["rows"]}
    verdict = assess(_fixture_metadata(rows["uncertain-state"]), now)
    assert (verdict.eligible, verdict.factor, verdict.qualified) == (True, 0.65, True)
    assert verdict.annotation == (
        "[Temporal: possibly outdated state; "
        "from 1970-01-01 00:16:40 until 1970-01-01 00:25:00 (UTC); confidence 0.60]"
    )
    assert assess(_fixture_metadata(rows["expired-state"]), now).eligible is False
    assert assess(_fixture_metadata(rows["future-plan"]), now).label == "plan"
    assert assess(_fixture_metadata(rows["previous-plan"]), now).label == "previously planned"
    assert assess(_fixture_metadata(rows["historical-event"]), now).label == "historical event"


# --- lenient normaliser for stored rows (R-TIME-4) -------------------------------------------

_FROM_MS, _UNTIL_MS = 1_000_000, 1_500_000
_FROM = datetime.fromtimestamp(1_000, tz=UTC)
_UNTIL = datetime.fromtimestamp(1_500, tz=UTC)


def stored(**overrides: object) -> dict[str, object]:
    row: dict[str, object] = {
        "kind": "state",
        "valid_from": _FROM_MS,
        "valid_until": _UNTIL_MS,
        "confidence": 0.9,
        "precision": "day",
        "timezone": "Europe/Berlin",
    }
    row.update(overrides)
    return row


@pytest.mark.parametrize(
    ("valid_from", "valid_until"),
    [
        (_FROM_MS, _UNTIL_MS),
        (float(_FROM_MS) + 0.7, _UNTIL_MS),  # milliseconds truncate like JavaScript's Math.trunc
        ("1970-01-01T00:16:40Z", "1970-01-01T01:25:00+01:00"),
        (" 1970-01-01T00:16:40.000Z ", "1970-01-01T00:25Z"),
        (_FROM, _UNTIL),
    ],
    ids=["epoch-ms", "float-ms", "iso-offset", "iso-fraction-padded", "datetime"],
)
def test_valid_stored_fields_load_unchanged_and_clean(
    valid_from: object, valid_until: object
) -> None:
    """R-TIME-4: a healthy row is not flagged and keeps its reading."""
    metadata, corrupt = lenient_normalise(**stored(valid_from=valid_from, valid_until=valid_until))
    assert not corrupt
    assert metadata.interval == Interval(valid_from=_FROM, valid_until=_UNTIL)
    assert (metadata.kind, metadata.precision, metadata.timezone, metadata.confidence) == (
        TemporalKind.STATE,
        Precision.DAY,
        "Europe/Berlin",
        0.9,
    )


def test_exact_precision_of_deepchat_rows_is_clean() -> None:
    """R-TIME-4: 'exact' is DeepChat's spelling, not corruption."""
    metadata, corrupt = lenient_normalise(**stored(precision="exact"))
    assert (metadata.precision, corrupt) == (Precision.INSTANT, False)


def test_row_without_any_temporal_field_is_clean_atemporal() -> None:
    """R-TIME-4: legacy rows predating temporal metadata are atemporal, not corrupt."""
    assert lenient_normalise(kind=None) == (ATEMPORAL, False)
    assert lenient_normalise(kind="atemporal") == (ATEMPORAL, False)


@pytest.mark.parametrize(
    "overrides",
    [
        {"kind": "rumour"},
        {"kind": 7},
        {"kind": "atemporal"},  # with stray bounds and confidence
        {"kind": None},  # with stray bounds and confidence
        {"valid_from": "yesterday"},
        {"valid_from": "1970-01-01T00:16:40"},  # no zone
        {"valid_from": "1970-02-30T00:00Z"},
        {"valid_from": "1970-01-01T24:00Z"},
        {"valid_from": "1970-01-01T00:00+15:00"},
        {"valid_until": float("nan")},
        {"valid_until": True},
        {"valid_until": 10**20},
        {"valid_from": datetime(1970, 1, 1)},  # naive
        {"valid_from": _UNTIL_MS},  # from == until
        {"valid_from": _UNTIL_MS + 1},  # from > until
    ],
)
def test_unusable_kind_or_bounds_become_atemporal_and_are_flagged(
    overrides: dict[str, object],
) -> None:
    """R-TIME-4: neutralised to atemporal, and flagged so repair archives the claim."""
    assert lenient_normalise(**stored(**overrides)) == (ATEMPORAL, True)


def test_missing_precision_becomes_unknown_and_renders_approximate() -> None:
    """R-TIME-4: precision missing ⇒ unknown (and the annotation says approximate)."""
    metadata, corrupt = lenient_normalise(**stored(precision=None))
    assert corrupt
    assert metadata.precision is Precision.UNKNOWN
    assert "; approximate" in (assess(metadata, NOW).annotation or "")


@pytest.mark.parametrize("precision", ["fortnight", 3, "Day"])
def test_unknown_precision_becomes_unknown(precision: object) -> None:
    """R-TIME-4: an unrecognised precision degrades to unknown, never fails."""
    metadata, corrupt = lenient_normalise(**stored(precision=precision))
    assert (metadata.precision, corrupt) == (Precision.UNKNOWN, True)


@pytest.mark.parametrize(
    ("confidence", "expected"),
    [(None, 0.5), ("0.7", 0.7), ("high", 0.5), (1.7, 1.0), (-3, 0.0), (float("nan"), 0.5)],
)
def test_bad_confidence_is_defaulted_or_clamped(confidence: object, expected: float) -> None:
    """R-TIME-4: missing confidence ⇒ 0.5; out-of-range values are clamped."""
    metadata, corrupt = lenient_normalise(**stored(confidence=confidence))
    assert (metadata.confidence, corrupt) == (expected, True)


def test_invalid_zone_falls_back_and_caps_confidence() -> None:
    """R-TIME-4: a zone we cannot trust lowers the temporal confidence to at most 0.5."""
    metadata, corrupt = lenient_normalise(
        **stored(timezone="Mars/Olympus"), fallback_timezone="Asia/Tokyo"
    )
    assert (metadata.timezone, metadata.confidence, corrupt) == ("Asia/Tokyo", 0.5, True)
    assert metadata.kind is TemporalKind.STATE
    assert metadata.interval == Interval(valid_from=_FROM, valid_until=_UNTIL)


def test_missing_zone_falls_back_without_capping() -> None:
    """R-TIME-4: an absent zone is not evidence of a wrong resolution."""
    for zone in (None, ""):
        metadata, corrupt = lenient_normalise(**stored(timezone=zone))
        assert (metadata.timezone, metadata.confidence, corrupt) == ("UTC", 0.9, True)


def test_invalid_fallback_zone_falls_back_to_utc() -> None:
    """R-TIME-4: the normaliser never fails, even on a bad fallback."""
    metadata, _ = lenient_normalise(**stored(timezone="Nope/Nope"), fallback_timezone="Bad/Zone")
    assert metadata.timezone == "UTC"


_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["state", "event", "plan", "recurring", "atemporal", "day", "exact", "UTC"]),
    st.datetimes(),
    st.datetimes(timezones=st.just(UTC)),
)


_RAW_FIELDS = ("kind", "valid_from", "valid_until", "confidence", "precision", "timezone")


@given(raw=st.fixed_dictionaries({name: _junk for name in _RAW_FIELDS}))
def test_lenient_normalise_never_fails_and_always_yields_valid_metadata(
    raw: dict[str, object],
) -> None:
    """R-TIME-4: one corrupt row never fails startup; the result is always valid metadata."""
    metadata, corrupt = lenient_normalise(**raw)
    assert isinstance(metadata, TemporalMetadata)
    assert isinstance(corrupt, bool)
    assess(metadata, NOW)  # every normalised reading can be judged and rendered
    if not corrupt and not metadata.is_atemporal:
        assert metadata.kind.value == raw["kind"]


# --- working projection (reference §8.7, R-READ-9) -------------------------------------------


def test_working_sections_are_in_the_fixed_order() -> None:
    """R-READ-9: current state, stable preferences/facts, recent events, plans, reflections."""
    assert [section.value for section in sorted(WorkingSection, key=lambda s: s.order)] == [
        "Current high-confidence states",
        "Qualified states",
        "Stable preferences and facts",
        "Recent events",
        "Plans and recurring items",
        "High-level reflections",
    ]


@pytest.mark.parametrize(
    ("metadata", "section"),
    [
        (ATEMPORAL, WorkingSection.STABLE_FACTS),
        (meta("state", NOW_WINDOW, 0.8), WorkingSection.CURRENT_STATES),
        (meta("state", NOW_WINDOW, 0.7), WorkingSection.QUALIFIED_STATES),
        (meta("state", UNDATED, 0.95), WorkingSection.QUALIFIED_STATES),
        (meta("state", PAST, 0.6), WorkingSection.QUALIFIED_STATES),
        (meta("state", FUTURE, 0.6), WorkingSection.QUALIFIED_STATES),
        (meta("state", PAST, 0.95), None),
        (meta("event", PAST), WorkingSection.RECENT_EVENTS),
        (meta("event", FUTURE), WorkingSection.PLANS_AND_RECURRING),
        (meta("plan", FUTURE), WorkingSection.PLANS_AND_RECURRING),
        (meta("plan", PAST), WorkingSection.PLANS_AND_RECURRING),
        (meta("recurring", NOW_WINDOW), WorkingSection.PLANS_AND_RECURRING),
        (meta("recurring", PAST), WorkingSection.PLANS_AND_RECURRING),
    ],
)
def test_claims_land_in_the_reference_working_section(
    metadata: TemporalMetadata, section: WorkingSection | None
) -> None:
    """R-READ-9: classification by the current-mode assessment; ineligible claims are dropped."""
    assert working_section_for(assess(metadata, NOW), metadata) is section


def test_working_section_threshold_follows_the_policy() -> None:
    """R-READ-9: 'high-confidence' current states use the policy's hard-filter confidence."""
    metadata = meta("state", NOW_WINDOW, 0.7)
    policy = TemporalPolicy(hard_filter_confidence=0.6)
    verdict = assess(metadata, NOW, policy=policy)
    assert working_section_for(verdict, metadata, policy=policy) is WorkingSection.CURRENT_STATES


def test_working_status_rank_orders_qualified_states_and_plans() -> None:
    """R-READ-9: stable, documented order inside the qualified and plans sections."""
    qualified = [
        TemporalStatus.FUTURE,
        TemporalStatus.EXPIRED,
        TemporalStatus.UNDATED,
        TemporalStatus.CURRENT,
    ]
    assert sorted(qualified, key=working_status_rank) == list(reversed(qualified))
    plans = [
        TemporalStatus.ENDED_RECURRENCE,
        TemporalStatus.PREVIOUSLY_PLANNED,
        TemporalStatus.FUTURE_RECURRENCE,
        TemporalStatus.RECURRING,
        TemporalStatus.FUTURE_EVENT,
        TemporalStatus.PLANNED,
    ]
    assert sorted(plans, key=working_status_rank) == list(reversed(plans))


def test_an_assessor_judges_as_assess_does_with_its_arguments_checked_once() -> None:
    """Issue 15: a turn judges every candidate at one instant; `assessor` checks `now`, the
    mode and the policy once and then gives `assess`'s verdict for each metadata."""
    metadata = [
        TemporalMetadata(),
        *(
            TemporalMetadata(
                kind=TemporalKind.STATE,
                interval=Interval(valid_until=NOW - timedelta(days=1)),
                precision=Precision.DAY,
                timezone="Europe/Berlin",
                confidence=confidence,
            )
            for confidence in (0.3, 0.9)
        ),
    ]
    for mode in TemporalMode:
        judge = assessor(NOW, mode=mode)
        assert [judge(m) for m in metadata] == [assess(m, NOW, mode=mode) for m in metadata]
    with pytest.raises(TemporalError, match="now"):
        assessor(NOW.replace(tzinfo=None))
    with pytest.raises(TemporalError, match="mode"):
        assessor(NOW, mode="sometimes")  # type: ignore[arg-type]
