"""The per-turn helpers made cheaper for issue 15 decide exactly what their former versions
(tests/core/former_turn_path.py) decided: the near-duplicate test, the rank evidence of a
candidate, a candidate's coverage of the query, whether a claim falls in a period the query
names and what the sanitiser strips before it matches, over generated inputs (R-READ-6,
R-READ-8, R-TIME-3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
from former_turn_path import (
    former_coverage,
    former_coverage_tokens,
    former_jaccard_at_least,
    former_period_matches,
    former_rrf_term,
    former_strip_invisible,
    former_token_set,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata
from memory_core.domain.temporal_query import QueryPeriods
from memory_core.services.read.claim_tokens import ClaimTokenCache, token_set
from memory_core.services.read.fusion import Candidate, rrf_term
from memory_core.services.read.keywords import coverage_tokens
from memory_core.services.read.lexical_rank import _coverage
from memory_core.services.read.sanitizer import sanitize, strip_invisible
from memory_core.services.read.scoring import ScoringPolicy, _jaccard_at_least

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
_WORDS = st.frozensets(st.sampled_from([f"w{i}" for i in range(14)]), max_size=14)


@settings(max_examples=500, deadline=None)
@given(
    left=_WORDS,
    right=_WORDS,
    threshold=st.sampled_from([0.9, 0.5, 1.0, 2 / 3, 0.75, 0.1, 1e-9]),
)
def test_the_near_duplicate_test_is_the_former_one(
    left: frozenset[str], right: frozenset[str], threshold: float
) -> None:
    expected = former_jaccard_at_least(left, right, threshold)
    assert _jaccard_at_least(left, right, threshold) is expected


_RANK = st.none() | st.integers(0, 30)


@settings(max_examples=500, deadline=None)
@given(
    fts=_RANK,
    vector=_RANK,
    coverage=st.none() | st.floats(0, 1),
    named=st.booleans(),
    depth=st.none() | st.integers(1, 20),
    k=st.integers(1, 80),
    weights=st.tuples(st.floats(0, 2), st.floats(0, 2), st.floats(0, 2)),
)
def test_the_rank_evidence_is_the_former_sum(
    *,
    fts: int | None,
    vector: int | None,
    coverage: float | None,
    named: bool,
    depth: int | None,
    k: int,
    weights: tuple[float, float, float],
) -> None:
    policy = ScoringPolicy(
        rrf_k=k,
        rrf_depth=depth,
        rrf_vector_weight=weights[0],
        weight_coverage=weights[1],
        weight_period=weights[2],
    )
    candidate = Candidate(
        claim=_claim(NOW, None),
        fts_rank=fts,
        vector_rank=vector,
        similarity=None if vector is None else 0.5,
        coverage=coverage,
    )
    expected = former_rrf_term(candidate, policy, in_named_period=named)
    assert rrf_term(candidate, policy, in_named_period=named) == expected  # same float


def _claim(created: datetime, window: Interval | None) -> Claim:
    temporal = (
        TemporalMetadata()
        if window is None
        else TemporalMetadata(
            kind=TemporalKind.STATE,
            interval=window,
            precision=Precision.DAY,
            timezone="UTC",
            confidence=0.8,
        )
    )
    return Claim(
        id="c",
        agent_id="agent",
        kind=ClaimKind.EPISODIC,
        content="went to the support group",
        canonical_content="went to the support group",
        created_at=created,
        updated_at=created,
        temporal=temporal,
    )


_DAY = st.integers(-6, 6).map(lambda days: NOW + timedelta(days=days))


@st.composite
def _intervals(draw: st.DrawFn, *, open_bounds: bool) -> Interval:
    start = draw(st.none() | _DAY) if open_bounds else draw(_DAY)
    length = timedelta(days=draw(st.integers(1, 4)))
    end = None if open_bounds and draw(st.booleans()) else (start or NOW) + length
    return Interval(valid_from=start, valid_until=end)


@settings(max_examples=500, deadline=None)
@given(
    periods=st.lists(_intervals(open_bounds=False), max_size=6).map(lambda p: tuple(p + p[:3])),
    created=_DAY,
    window=st.none() | _intervals(open_bounds=True),
)
def test_a_claim_falls_in_repeated_periods_as_it_did(
    periods: tuple[Interval, ...], created: datetime, window: Interval | None
) -> None:
    claim = _claim(created, window)
    named = QueryPeriods(periods=periods)
    assert named.matches(claim) is former_period_matches(periods, claim)
    assert named == QueryPeriods(periods=periods) and named.periods == periods


# Line breaks of every kind, C0 controls and DEL, format characters, variation selectors,
# look-alikes and template tokens among plain words.
_PIECES = st.sampled_from(
    [
        "plain words ", "x", "\r\n", "\r", "\n", "\x0b", "\x0c", "\x85", "\u2028", "\u2029",
        "\t", "\x00", "\x1f", "\x7f", "\u200b", "\u00ad", "\ufe0f", "\U000e0041", "é",
        "<|im_start|>", "</context-data>", "```", "# ", "system:", "日本語", "\uff1c", "\U0001f600",
    ]
)  # fmt: skip
_STORED = st.lists(_PIECES, max_size=30).map("".join) | st.text(max_size=80)


@settings(max_examples=500, deadline=None)
@given(text=_STORED)
def test_stored_text_is_stripped_and_sanitised_as_it_was(text: str) -> None:
    stripped = strip_invisible(text)
    assert stripped == former_strip_invisible(text)
    assert sanitize(text) == sanitize(stripped)  # idempotent over the stripped form


_TEXT_WORDS = st.sampled_from(
    [
        "deploys", "deployed", "release", "the", "policy", "1", "12", "v1.2", "CHANGES", "what",
        "日本語", "語", "ｆｕｌｌ", "é", "naïve", "x_y", "it's", "\u212a", "2024-05-01", "a",
        "Straße", "ＡＢＣ", "İstanbul", "한국어",
    ]
)  # fmt: skip
_PHRASE = st.lists(_TEXT_WORDS, max_size=25).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(query=_PHRASE | st.text(max_size=60), contents=st.lists(_PHRASE, min_size=1, max_size=8))
def test_coverage_of_the_query_is_the_former_one(query: str, contents: list[str]) -> None:
    assert coverage_tokens(query) == former_coverage_tokens(query)
    assert token_set(query) == former_token_set(query)  # the near-duplicate words too
    claims = [_claim(NOW, None) for _ in contents]
    claims = [
        attrs.evolve(claim, id=f"c{index}", content=content or "x")
        for index, (claim, content) in enumerate(zip(claims, contents, strict=True))
    ]
    expected = former_coverage(query, claims, ClaimTokenCache())
    assert _coverage(query, claims, ClaimTokenCache()) == expected  # the same floats
