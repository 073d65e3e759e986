"""Periods named in a query, matched against claims by source time and validity (R-TIME-1/3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata
from memory_core.domain.temporal_query import query_periods


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


NOW = utc(2026, 1, 15, 12, 0)


def claim(created: datetime, temporal: TemporalMetadata | None = None) -> Claim:
    return Claim(
        id="c",
        agent_id="agent",
        kind=ClaimKind.EPISODIC,
        content="I went to the support group yesterday.",
        canonical_content="i went to the support group yesterday.",
        created_at=created,
        updated_at=created,
        **({"temporal": temporal} if temporal else {}),
    )


@pytest.mark.parametrize(
    ("query", "inside", "outside"),
    [
        (
            "What did Caroline do in May 2023?",
            utc(2023, 5, 8),
            utc(2023, 6, 2),
        ),
        (
            "What happened on 8 May, 2023?",
            utc(2023, 5, 8, 13),
            utc(2023, 5, 9, 1),
        ),
        (
            "What did we discuss last week?",
            utc(2026, 1, 6),
            utc(2026, 1, 14),
        ),
        (
            "what did I say yesterday",
            utc(2026, 1, 14, 9),
            utc(2026, 1, 13, 9),
        ),
    ],
)
def test_a_named_period_matches_claims_recorded_in_it(
    query: str, inside: datetime, outside: datetime
) -> None:
    """Absolute dates and dates relative to the domain clock both resolve; the claim's
    source time (created_at) decides."""
    periods = query_periods(query, reference=NOW, timezone="UTC")
    assert periods
    assert periods.matches(claim(inside))
    assert not periods.matches(claim(outside))


def test_a_claim_valid_during_the_period_matches_whenever_it_was_recorded() -> None:
    """R-TIME-1: a state valid in March 2025 answers "in March 2025" though recorded later."""
    held = TemporalMetadata(
        kind=TemporalKind.STATE,
        interval=Interval(
            valid_from=utc(2025, 2, 1),
            valid_until=utc(2025, 4, 1),
        ),
        precision=Precision.MONTH,
        timezone="UTC",
        confidence=0.9,
    )
    periods = query_periods("Where did she live in March 2025?", reference=NOW, timezone="UTC")
    assert periods.matches(claim(NOW - timedelta(days=1), held))
    assert not periods.matches(claim(NOW - timedelta(days=1)))


@pytest.mark.parametrize(
    "query", ["What does Caroline like?", "What did she do before 20 July 2023?", ""]
)
def test_no_period_or_an_open_one_matches_nothing(query: str) -> None:
    """An open bound ("before July") would match most of a memory: only bounded periods count."""
    periods = query_periods(query, reference=NOW, timezone="UTC")
    assert not periods
    assert not periods.matches(claim(utc(2023, 5, 8)))
