"""Scoring, fusion, temporal filtering, suppression and near-duplicate collapse (R-READ-8)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.directives import Directive
from memory_core.domain.errors import ConfigError
from memory_core.domain.manifest import CandidateSource, DropReason
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata
from memory_core.domain.temporal_policy import TemporalMode, TemporalStatus
from memory_core.services.read.fusion import Candidate, candidates_from_lists
from memory_core.services.read.scoring import (
    ScoringPolicy,
    filter_suppressed,
    rank_candidates,
    token_set,
)
from memory_core.settings import MemorySettings

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def claim(
    claim_id: str,
    content: str | None = None,
    *,
    kind: ClaimKind = ClaimKind.SEMANTIC,
    importance: float = 0.5,
    confidence: float | None = None,
    age: timedelta = timedelta(0),
    temporal: TemporalMetadata | None = None,
    access_count: int = 0,
) -> Claim:
    created = NOW - age
    return Claim(
        id=claim_id,
        agent_id="agent",
        kind=kind,
        content=content or f"memory {claim_id}",
        canonical_content=content or f"memory {claim_id}",
        importance=importance,
        confidence=confidence,
        created_at=created,
        updated_at=created,
        access_count=access_count,
        **({"temporal": temporal} if temporal else {}),
    )


def state(*, until: datetime, confidence: float) -> TemporalMetadata:
    return TemporalMetadata(
        kind=TemporalKind.STATE,
        interval=Interval(valid_from=until - timedelta(days=30), valid_until=until),
        precision=Precision.DAY,
        timezone="UTC",
        confidence=confidence,
    )


# The reference's worked examples use DeepChat's fusion: its RRF k, both lists weighted
# alike, no coverage, period or relative-floor term; our defaults are measured (issue 14).
DEEPCHAT = ScoringPolicy(
    rrf_k=60,
    rrf_vector_weight=1.0,
    weight_coverage=0.0,
    weight_period=0.0,
    similarity_floor_gap=None,
)


def test_fts_only_candidate_worked_example() -> None:
    """Reference §4.4: sim = FTS baseline 0.3, fresh, importance 0.5, confidence 0.7."""
    ranking = rank_candidates([Candidate(claim=claim("a"), fts_rank=0)], now=NOW, policy=DEEPCHAT)
    (item,) = ranking.items
    b = item.breakdown
    assert b.similarity == 0.3
    assert b.recency == 1.0
    assert b.base == pytest.approx(0.6 * 0.3 + 0.25 * 1.0 + 0.15 * 0.5)
    assert b.confidence_factor == pytest.approx(1.0)
    assert b.rrf == pytest.approx(1 / 61)
    assert item.score == pytest.approx(0.505)
    assert item.combined == pytest.approx(0.505 + 1 / 61)
    assert item.sources == (CandidateSource.FTS,)
    assert item.similarity is None


def test_vector_similarity_replaces_the_baseline_and_both_ranks_add_rrf() -> None:
    candidate = Candidate(claim=claim("a"), fts_rank=2, vector_rank=0, similarity=0.9)
    (item,) = rank_candidates([candidate], now=NOW, policy=DEEPCHAT).items
    assert item.breakdown.similarity == 0.9
    assert item.breakdown.rrf == pytest.approx(1 / 61 + 1 / 63)
    assert item.sources == (CandidateSource.FTS, CandidateSource.VECTOR)
    assert item.similarity == 0.9


def test_ranks_beyond_the_rrf_depth_add_nothing() -> None:
    policy = ScoringPolicy(rrf_depth=5)
    (item,) = rank_candidates(
        [Candidate(claim=claim("a"), fts_rank=5)], now=NOW, policy=policy
    ).items
    assert item.breakdown.rrf == 0.0
    whole = ScoringPolicy(rrf_k=60, rrf_depth=None)
    (item,) = rank_candidates(
        [Candidate(claim=claim("a"), fts_rank=500)], now=NOW, policy=whole
    ).items
    assert item.breakdown.rrf == pytest.approx(1 / 561)


def test_rrf_weight_and_k_are_explicit_inputs() -> None:
    policy = ScoringPolicy(rrf_k=10, rrf_weight=3.0)
    (item,) = rank_candidates(
        [Candidate(claim=claim("a"), fts_rank=0)], now=NOW, policy=policy
    ).items
    assert item.breakdown.rrf == pytest.approx(1 / 11)
    assert item.combined == pytest.approx(item.breakdown.score + 3 / 11)


@pytest.mark.parametrize(
    ("kind", "days"),
    [(ClaimKind.SEMANTIC, 14), (ClaimKind.EPISODIC, 30), (ClaimKind.REFLECTION, 60)],
)
def test_recency_halves_after_the_kind_half_life(kind: ClaimKind, days: int) -> None:
    old = claim("a", kind=kind, age=timedelta(days=days))
    (item,) = rank_candidates(
        [Candidate(claim=old, fts_rank=0)], now=NOW, policy=ScoringPolicy()
    ).items
    assert item.breakdown.recency == pytest.approx(0.5)


def test_future_created_at_counts_as_fresh() -> None:
    skewed = claim("a", age=-timedelta(days=3))
    (item,) = rank_candidates(
        [Candidate(claim=skewed, fts_rank=0)], now=NOW, policy=ScoringPolicy()
    ).items
    assert item.breakdown.recency == 1.0


@pytest.mark.parametrize(("confidence", "factor"), [(1.0, 1.15), (0.0, 0.65), (None, 1.0)])
def test_confidence_factor_range(confidence: float | None, factor: float) -> None:
    (item,) = rank_candidates(
        [Candidate(claim=claim("a", confidence=confidence), fts_rank=0)],
        now=NOW,
        policy=ScoringPolicy(),
    ).items
    assert item.breakdown.confidence_factor == pytest.approx(factor)


def test_importance_floor_holds_when_weighted_terms_vanish() -> None:
    policy = ScoringPolicy(weight_similarity=0, weight_recency=0, weight_importance=0)
    (item,) = rank_candidates(
        [Candidate(claim=claim("a", importance=0.8), fts_rank=0)], now=NOW, policy=policy
    ).items
    assert item.breakdown.score == pytest.approx(0.15 * 0.8)


def test_access_weight_is_off_by_default_and_saturates_when_on() -> None:
    busy = claim("a", access_count=8)
    (default,) = rank_candidates(
        [Candidate(claim=busy, fts_rank=0)], now=NOW, policy=ScoringPolicy()
    ).items
    assert default.breakdown.access == pytest.approx(0.5)
    assert default.breakdown.base == pytest.approx(0.505)
    weighted = ScoringPolicy(weight_access=0.2)
    (item,) = rank_candidates([Candidate(claim=busy, fts_rank=0)], now=NOW, policy=weighted).items
    assert item.breakdown.base == pytest.approx(0.505 + 0.1)


def test_high_confidence_expired_state_is_dropped_for_time() -> None:
    """R-TIME-3: excluded from current recall, reported with reason temporal."""
    expired = claim("a", temporal=state(until=NOW - timedelta(days=1), confidence=0.9))
    ranking = rank_candidates(
        [Candidate(claim=expired, fts_rank=0)], now=NOW, policy=ScoringPolicy()
    )
    assert ranking.items == ()
    assert [(d.id, d.reason) for d in ranking.dropped] == [("a", DropReason.TEMPORAL)]


def test_low_confidence_expired_state_fails_open_scored_lower_with_a_qualification() -> None:
    """R-TIME-3: low-confidence resolutions fail open, lower factor, qualified annotation."""
    doubtful = claim("a", temporal=state(until=NOW - timedelta(days=1), confidence=0.6))
    (item,) = rank_candidates(
        [Candidate(claim=doubtful, fts_rank=0)], now=NOW, policy=ScoringPolicy()
    ).items
    assert item.breakdown.temporal_factor == pytest.approx(0.65)
    assert item.breakdown.temporal_status is TemporalStatus.EXPIRED
    assert item.score == pytest.approx(item.breakdown.score * 0.65)
    assert item.assessment.annotation is not None
    assert "possibly outdated state" in item.assessment.annotation
    assert "confidence 0.60" in item.assessment.annotation


def test_evidence_mode_sees_expired_states_at_full_weight() -> None:
    """R-TIME-3: a time filter is never a delete; decision retrieval sees everything."""
    expired = claim("a", temporal=state(until=NOW - timedelta(days=1), confidence=0.9))
    ranking = rank_candidates(
        [Candidate(claim=expired, fts_rank=0)],
        now=NOW,
        mode=TemporalMode.EVIDENCE,
        policy=ScoringPolicy(),
    )
    assert [item.claim.id for item in ranking.items] == ["a"]
    assert ranking.items[0].breakdown.temporal_factor == 1.0


def test_equal_scores_tie_break_by_id() -> None:
    candidates = [Candidate(claim=claim(i), vector_rank=0, similarity=0.5) for i in "cab"]
    ids = [
        item.claim.id for item in rank_candidates(candidates, now=NOW, policy=ScoringPolicy()).items
    ]
    assert ids == ["a", "b", "c"]


def test_combined_sorts_first_then_final_score() -> None:
    # b has the higher score, a the higher combined (both lists): combined wins.
    a = Candidate(claim=claim("a"), fts_rank=0, vector_rank=0, similarity=0.50)
    b = Candidate(claim=claim("b"), vector_rank=1, similarity=0.52)
    ranking = rank_candidates([b, a], now=NOW, policy=ScoringPolicy())
    assert [item.claim.id for item in ranking.items] == ["a", "b"]
    assert ranking.items[0].score < ranking.items[1].score


POOL = [
    Candidate(
        claim=claim(
            f"c{i:02d}",
            f"fact number {i} about topic {i % 3}",
            kind=(ClaimKind.SEMANTIC, ClaimKind.EPISODIC, ClaimKind.REFLECTION)[i % 3],
            importance=(i % 4) / 4,
            confidence=None if i % 5 == 0 else (i % 7) / 7,
            age=timedelta(days=i * 3),
        ),
        fts_rank=i if i % 2 == 0 else None,
        vector_rank=i // 2 if i % 2 == 1 else (0 if i % 6 == 0 else None),
        similarity=((i * 37) % 100) / 100 if i % 2 == 1 or i % 6 == 0 else None,
    )
    for i in range(30)
]


@settings(max_examples=60)
@given(st.permutations(POOL))
def test_shuffled_input_gives_the_identical_ranking(shuffled: list[Candidate]) -> None:
    """R-READ-8: deterministic, stable tie-break by id — input order never matters."""
    expected = rank_candidates(POOL, now=NOW, top_k=10, policy=ScoringPolicy())
    assert rank_candidates(shuffled, now=NOW, top_k=10, policy=ScoringPolicy()) == expected


# The pool with every fourth claim an expired, confident state: dropped for time.
TIMED_POOL = [
    attrs.evolve(
        candidate,
        claim=attrs.evolve(
            candidate.claim, temporal=state(until=NOW - timedelta(days=1), confidence=0.9)
        ),
    )
    if i % 4 == 1
    else candidate
    for i, candidate in enumerate(POOL)
]


@settings(max_examples=60)
@given(st.permutations(TIMED_POOL))
def test_shuffled_input_reports_the_temporal_drops_in_id_order(shuffled: list[Candidate]) -> None:
    """R-READ-8: the manifest's drops, too, never depend on the input order."""
    ranking = rank_candidates(shuffled, now=NOW, top_k=10, policy=ScoringPolicy())
    temporal = [d.id for d in ranking.dropped if d.reason is DropReason.TEMPORAL]
    assert len(temporal) >= 3 and temporal == sorted(temporal)
    assert ranking == rank_candidates(TIMED_POOL, now=NOW, top_k=10, policy=ScoringPolicy())


def test_exact_canonical_duplicates_collapse_to_the_best_scored() -> None:
    """R-READ-8: near-duplicates are collapsed; the loser is reported as duplicate."""
    best = Candidate(claim=claim("z", "User  lives in Paris"), vector_rank=0, similarity=0.9)
    worse = Candidate(claim=claim("a", " User lives in Paris "), fts_rank=3)
    ranking = rank_candidates([worse, best], now=NOW, policy=ScoringPolicy())
    assert [item.claim.id for item in ranking.items] == ["z"]
    assert [(d.id, d.reason) for d in ranking.dropped] == [("a", DropReason.DUPLICATE)]


def test_token_jaccard_at_or_above_the_threshold_collapses() -> None:
    words = "the user prefers green tea over coffee in the morning at work daily"
    near = words + " too"  # 13 shared of 14 tokens: Jaccard 0.93
    ranking = rank_candidates(
        [
            Candidate(claim=claim("a", words), vector_rank=0, similarity=0.9),
            Candidate(claim=claim("b", near.upper()), vector_rank=1, similarity=0.8),
        ],
        now=NOW,
        policy=ScoringPolicy(),
    )
    assert [item.claim.id for item in ranking.items] == ["a"]
    assert ranking.dropped[0].reason is DropReason.DUPLICATE


def test_distinct_but_similar_memories_are_both_kept() -> None:
    ranking = rank_candidates(
        [
            Candidate(claim=claim("a", "User lives in Paris"), vector_rank=0, similarity=0.9),
            Candidate(claim=claim("b", "User lives in Berlin"), vector_rank=1, similarity=0.8),
        ],
        now=NOW,
        policy=ScoringPolicy(),
    )
    assert [item.claim.id for item in ranking.items] == ["a", "b"]
    assert ranking.dropped == ()


def test_cjk_token_set_uses_character_bigrams() -> None:
    assert token_set("我喜欢咖啡") == frozenset({"我喜", "喜欢", "欢咖", "咖啡"})
    assert token_set("Hello, WORLD_x") == frozenset({"hello", "world", "x"})


def test_top_k_cuts_after_collapse_and_reports_no_drops_past_the_cut() -> None:
    candidates = [
        Candidate(claim=claim(f"m{i}", f"distinct memory {i}"), fts_rank=i) for i in range(10)
    ]
    # Same rank as m1 and "dup" < "m1": met right after m0, whose content it repeats.
    candidates.append(Candidate(claim=claim("dup", "distinct memory 0"), fts_rank=1))
    ranking = rank_candidates(candidates, now=NOW, top_k=3, policy=ScoringPolicy())
    assert [item.claim.id for item in ranking.items] == ["m0", "m1", "m2"]
    assert [(d.id, d.reason) for d in ranking.dropped] == [("dup", DropReason.DUPLICATE)]


def test_the_same_id_handed_over_twice_keeps_its_best_ranks() -> None:
    c = claim("a")
    ranking = rank_candidates(
        [
            Candidate(claim=c, fts_rank=4),
            Candidate(claim=c, fts_rank=1, vector_rank=2, similarity=0.4),
        ],
        now=NOW,
        policy=DEEPCHAT,
    )
    (item,) = ranking.items
    assert item.breakdown.rrf == pytest.approx(1 / 62 + 1 / 63)


def test_candidates_from_lists_merges_by_id_with_positions_as_ranks() -> None:
    a, b, c = claim("a"), claim("b"), claim("c")
    merged = {m.claim.id: m for m in candidates_from_lists([a, b], [(b, 0.7), (c, 0.5)])}
    assert (merged["a"].fts_rank, merged["a"].vector_rank) == (0, None)
    assert (merged["b"].fts_rank, merged["b"].vector_rank, merged["b"].similarity) == (1, 0, 0.7)
    assert (merged["c"].fts_rank, merged["c"].vector_rank) == (None, 1)


def directive(topic: str, *, status: str = "active") -> Directive:
    return Directive(
        id=f"d-{topic}",
        agent_id="agent",
        kind="suppress_topic",
        status=status,
        source="manual",
        content=f"Do not bring up {topic}",
        topic=topic,
        identity_hash="h",
        created_at=NOW,
        updated_at=NOW,
    )


def test_suppress_topic_filters_by_normalised_substring() -> None:
    """R-DIR-2: suppression drops matching candidates before fusion and access accounting."""
    kept, dropped = filter_suppressed(
        [
            Candidate(claim=claim("a", "Talked about the  DIVORCE lawyer"), fts_rank=0),
            Candidate(claim=claim("b", "Likes tea"), fts_rank=1),
        ],
        [directive("divorce")],
    )
    assert [c.claim.id for c in kept] == ["b"]
    assert [(d.id, d.reason) for d in dropped] == [("a", DropReason.SUPPRESSED)]


def test_over_broad_or_inactive_suppress_topics_are_ignored() -> None:
    """R-DIR-2: a single CJK character is too broad; drafts do not suppress."""
    candidates = [Candidate(claim=claim("a", "我喜欢猫"), fts_rank=0)]
    kept, dropped = filter_suppressed(
        candidates, [directive("猫"), directive("喜欢", status="draft")]
    )
    assert [c.claim.id for c in kept] == ["a"]
    assert dropped == ()


def test_policy_from_settings_carries_the_tunable_constants() -> None:
    s = MemorySettings(rrf_k=10, top_k=10, weight_similarity=0.5, temporal_uncertain_factor=0.5)
    policy = ScoringPolicy.from_settings(s, fts_baseline=0.4)
    assert (policy.rrf_k, policy.rrf_depth, policy.weight_similarity) == (10, 20, 0.5)
    assert policy.fts_baseline == 0.4
    assert policy.temporal.uncertain_factor == 0.5


@pytest.mark.parametrize(
    "bad",
    [
        {"weight_similarity": 1.5},
        {"weight_recency": math.nan},
        {"rrf_k": 0},
        {"rrf_depth": 0},
        {"duplicate_jaccard": 0.0},
        {"fts_baseline": -0.1},
    ],
)
def test_invalid_policy_values_are_rejected_naming_the_field(bad: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match=next(iter(bad))):
        ScoringPolicy(**bad)


def test_the_vector_rank_term_has_its_own_weight() -> None:
    """Issue 14, R-READ-8: the vector list's RRF term is scaled by `rrf_vector_weight`
    (MiniLM's first hit is right less often than BM25's, so its rank counts for less)."""
    policy = ScoringPolicy(rrf_k=2, rrf_vector_weight=0.3)
    both = Candidate(claim=claim("a"), fts_rank=0, vector_rank=0, similarity=0.5)
    [item] = rank_candidates([both], now=NOW, policy=policy).items
    assert math.isclose(item.breakdown.rrf, 1 / 3 + 0.3 / 3)


def test_a_lexical_first_hit_keeps_the_top_against_a_dense_first_hit() -> None:
    """Issue 14: with the measured default, the row FTS ranks first stays first over a row
    only the vector source ranks first at a higher similarity."""
    policy = ScoringPolicy()
    lexical = Candidate(claim=claim("lex"), fts_rank=0, vector_rank=3, similarity=0.35)
    dense = Candidate(claim=claim("dense"), fts_rank=4, vector_rank=0, similarity=0.55)
    ranking = rank_candidates([dense, lexical], now=NOW, policy=policy)
    assert [item.claim.id for item in ranking.items] == ["lex", "dense"]


def test_vector_evidence_far_below_the_querys_best_is_set_aside() -> None:
    """Issue 14: vector evidence more than `similarity_floor_gap` below the query's best is
    set aside — a vector-only row goes, a row FTS also found keeps its lexical evidence."""
    policy = ScoringPolicy(similarity_floor_gap=0.2)
    best = Candidate(claim=claim("best"), vector_rank=0, similarity=0.8)
    weak = Candidate(claim=claim("weak"), vector_rank=1, similarity=0.5)
    weak_but_lexical = Candidate(claim=claim("lex"), fts_rank=0, vector_rank=2, similarity=0.45)
    ranking = rank_candidates([best, weak, weak_but_lexical], now=NOW, policy=policy)
    by_id = {item.claim.id: item for item in ranking.items}
    assert set(by_id) == {"best", "lex"}
    assert by_id["lex"].sources == (CandidateSource.FTS,)
    assert by_id["lex"].breakdown.similarity == policy.fts_baseline
    unguarded = rank_candidates(
        [best, weak], now=NOW, policy=ScoringPolicy(similarity_floor_gap=None)
    )
    assert {item.claim.id for item in unguarded.items} == {"best", "weak"}


def test_a_claim_in_the_period_the_query_names_is_promoted() -> None:
    """Issue 14, R-TIME-3: a dated query promotes the row recorded in its period by
    `weight_period`, over an equally ranked row recorded elsewhen."""
    from memory_core.domain.temporal_query import query_periods

    periods = query_periods("what happened in May 2026", reference=NOW, timezone="UTC")
    in_may = Candidate(claim=claim("may", age=timedelta(days=14)), fts_rank=0)
    in_april = Candidate(claim=claim("april", age=timedelta(days=45)), fts_rank=0)
    policy = ScoringPolicy(weight_period=0.3)
    ranking = rank_candidates([in_april, in_may], now=NOW, policy=policy, periods=periods)
    assert [item.claim.id for item in ranking.items] == ["may", "april"]
    plain = rank_candidates([in_april, in_may], now=NOW, policy=policy)
    assert [item.claim.id for item in plain.items] == ["may", "april"]  # recency, smaller gap
    gap = ranking.items[0].combined - ranking.items[1].combined
    assert gap > plain.items[0].combined - plain.items[1].combined + 0.29


def test_turn_verdicts_judge_each_revision_once_and_again_when_its_time_changed() -> None:
    """Issue 15: the refill count and the ranking share one verdict per claim revision
    (R-TIME-3); a row whose temporal metadata changed without a revision bump is judged
    again, never given the old verdict."""
    from memory_core.domain.temporal_policy import TemporalPolicy, assess
    from memory_core.services.read.scoring import TurnVerdicts

    policy = TemporalPolicy(hard_filter_confidence=0.5)
    verdicts = TurnVerdicts(now=NOW, mode=TemporalMode.CURRENT, policy=policy)
    current = claim("s", temporal=state(until=NOW + timedelta(days=1), confidence=0.6))
    first = verdicts.of(current)
    assert first == assess(current.temporal, NOW, policy=policy) and first.eligible
    assert verdicts.of(attrs.evolve(current)) is first  # same revision, equal metadata
    expired = attrs.evolve(current, temporal=state(until=NOW, confidence=0.6))
    assert not verdicts.eligible(expired)  # trusted under this policy's threshold
    assert verdicts.eligible(attrs.evolve(expired, temporal=state(until=NOW, confidence=0.4)))


def test_rank_candidates_refuses_verdicts_judged_for_another_turn() -> None:
    from memory_core.domain.errors import ValidationError
    from memory_core.services.read.scoring import TurnVerdicts

    policy = ScoringPolicy()
    later = TurnVerdicts(
        now=NOW + timedelta(days=1), mode=TemporalMode.CURRENT, policy=policy.temporal
    )
    evidence = TurnVerdicts(now=NOW, mode=TemporalMode.EVIDENCE, policy=policy.temporal)
    for verdicts in (later, evidence):
        with pytest.raises(ValidationError, match="verdicts"):
            rank_candidates(
                [Candidate(claim=claim("a"), fts_rank=0)], now=NOW, policy=policy, verdicts=verdicts
            )
