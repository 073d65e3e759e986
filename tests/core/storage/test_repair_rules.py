"""Startup repair decisions once in the core (R-SCOPE-4, R-TIME-4): never widen a scope;
archive a row whose temporal fields were corrupt; internal rows become atemporal."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core.domain.scope import MAX_SCOPE_ID_LENGTH
from memory_core.domain.temporal import ATEMPORAL, TemporalKind
from memory_core.storage.repair import (
    ScopeRepair,
    is_internal_kind,
    scope_repair,
    temporal_repair,
)


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        (
            ("agent", "stray", "shadow"),
            ScopeRepair(scope_type="agent", scope_id=None, user_scope=None),
        ),
        (("user", "u1", None), ScopeRepair(scope_type="user", scope_id="u1", user_scope="u1")),
        (("user", None, "u2"), ScopeRepair(scope_type="user", scope_id="u2", user_scope="u2")),
        (("user", " u1", "u3"), ScopeRepair(scope_type="user", scope_id="u3", user_scope="u3")),
        (
            ("project", "p1", "shadow"),
            ScopeRepair(scope_type="project", scope_id="p1", user_scope=None),
        ),
        (
            ("session", "s1", None),
            ScopeRepair(scope_type="session", scope_id="s1", user_scope=None),
        ),
    ],
)
def test_repairable_scopes_are_fixed_without_widening(
    columns: tuple, expected: ScopeRepair
) -> None:  # type: ignore[type-arg]
    """R-SCOPE-4."""
    assert scope_repair(*columns) == expected


@pytest.mark.parametrize(
    "columns",
    [
        ("user", None, None),
        ("user", "", " "),
        ("project", None, "p1"),  # a project row is never recovered from a user shadow
        ("session", "x" * (MAX_SCOPE_ID_LENGTH + 1), None),
        ("galaxy", "g1", None),
        (7, None, None),
    ],
)
def test_unrepairable_narrow_scopes_can_only_be_deleted(columns: tuple) -> None:  # type: ignore[type-arg]
    assert scope_repair(*columns) is None


def _fields(**overrides: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "kind": "semantic",
        "temporal_kind": "state",
        "valid_from": 1_700_000_000_000,
        "valid_until": 1_600_000_000_000,  # before valid_from: corrupt
        "precision": "day",
        "timezone": "UTC",
        "confidence": 0.9,
    }
    fields.update(overrides)
    return fields


def test_a_corrupt_interval_is_read_leniently_and_the_claim_archived() -> None:
    """R-TIME-4: never a permanent atemporal fact without the archive."""
    decision = temporal_repair(**_fields())  # type: ignore[arg-type]
    assert decision.archive and decision.temporal.is_atemporal


def test_a_bad_zone_falls_back_and_archives_with_datetimes_or_millis() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for valid_from in (start, 1_767_225_600_000):
        decision = temporal_repair(
            **_fields(valid_from=valid_from, valid_until=None, timezone="Mars/Base")
        )  # type: ignore[arg-type]
        assert decision.archive
        assert decision.temporal.kind is TemporalKind.STATE
        assert decision.temporal.interval.valid_from == start
        assert decision.temporal.timezone == "UTC"


@pytest.mark.parametrize("kind", ["persona", "working"])
def test_internal_rows_become_atemporal_and_stay_active(kind: str) -> None:
    decision = temporal_repair(**_fields(kind=kind))  # type: ignore[arg-type]
    assert decision.temporal is ATEMPORAL and not decision.archive


def test_unknown_kinds_are_not_internal() -> None:
    assert is_internal_kind("persona") and not is_internal_kind("semantic")
    assert not is_internal_kind("nonsense") and not is_internal_kind(None)
