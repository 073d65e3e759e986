"""Deterministic scoring, fusion and near-duplicate collapse of recall candidates (R-READ-8).

Reference §4.4, with every constant an explicit, tunable input (`ScoringPolicy`), because the
LoCoMo dev baselines show DeepChat's constants are a starting point, not a result:

    rrf        = 1/(rrf_k + fts_rank + 1) + rrf_vector_weight/(rrf_k + vector_rank + 1)
                 + weight_coverage·coverage + weight_period·[recorded in / valid during a
                 period the query names]     (0-based ranks; ranks ≥ rrf_depth add 0)
    similarity = vector similarity, or fts_baseline for a row only FTS found; vector evidence
                 more than similarity_floor_gap below the query's best is set aside
    recency    = 0.5 ^ (age / half_life(kind))
    access     = access_count / (access_count + access_saturation)
    base       = w_sim·similarity + w_rec·recency + w_imp·importance + w_acc·access
    score      = max(base · max(0, 1 + slope·(confidence − 0.7)), importance_floor · importance)
    final      = score · temporal_factor;   combined = (score + rrf_weight·rrf) · temporal_factor

Candidates the current-mode temporal policy finds ineligible are dropped (`temporal`,
R-TIME-3). Order: combined DESC, final DESC, id ASC — so the same candidates in any input order
give the same ranking. Walking that order, a candidate whose canonical content equals, or whose
token set has Jaccard ≥ `duplicate_jaccard` with, an already kept one is dropped (`duplicate`).
Suppression by `suppress_topic` directives (R-DIR-2) is a separate filter the retrieval service
applies first, before any access accounting.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import attrs

from memory_core.domain.claims import DEFAULT_CONFIDENCE, Claim, ClaimKind
from memory_core.domain.directives import Directive, DirectiveKind, is_topic_specific, match_text
from memory_core.domain.errors import ConfigError, ValidationError
from memory_core.domain.manifest import (
    CandidateSource,
    DroppedItem,
    DropReason,
    ScoreBreakdown,
)
from memory_core.domain.temporal import require_utc
from memory_core.domain.temporal_policy import (
    TemporalAssessment,
    TemporalMode,
    TemporalPolicy,
    assess,
)
from memory_core.domain.temporal_query import QueryPeriods
from memory_core.services.read.claim_tokens import ClaimTokenCache, token_set
from memory_core.settings import MemorySettings

__all__ = [
    "Candidate",
    "Ranking",
    "ScoredItem",
    "ScoringPolicy",
    "candidates_from_lists",
    "filter_suppressed",
    "rank_candidates",
    "token_set",
]

_SECONDS_PER_DAY = 86_400.0


def _unit(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ConfigError(f"scoring.{attribute.name} must be a number in [0, 1]")


def _positive(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"scoring.{attribute.name} must be positive")


def _non_negative(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ConfigError(f"scoring.{attribute.name} must not be negative")


def _threshold(instance: object, attribute: attrs.Attribute, value: float) -> None:
    # 0 would make every pair of memories "duplicates", even ones sharing no word.
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 < value <= 1.0:
        raise ConfigError(f"scoring.{attribute.name} must be a number in (0, 1]")


def _optional_unit(instance: object, attribute: attrs.Attribute, value: float | None) -> None:
    if value is not None:
        _unit(instance, attribute, value)


def _depth(instance: object, attribute: attrs.Attribute, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError("scoring.rrf_depth must be a positive integer or None")


@attrs.frozen(kw_only=True)
class ScoringPolicy:
    """Every constant of the fusion, explicit so measurement can tune it.

    Defaults are DeepChat's (reference §4.4) except `rrf_k`: 2, not 60, chosen by measurement
    on DeepChat's retrieval fixture and LoCoMo together (docs/evaluation.md) — the RRF term is
    added to a base score of about 0.2–0.9, and with k=60 rank moved a result by less than
    0.003 across the top 12, so hybrid ranking was vector similarity plus importance and
    lost to plain BM25. `rrf_depth` defaults to DeepChat's per-source fusion limit (2 × top-K,
    so 12); `None` fuses whole lists, which the LoCoMo note measured as worse than BM25
    alone. `rrf_weight` scales the RRF term (1 = DeepChat), and
    `weight_access` is 0 by default (R-READ-8 names access; DeepChat does not weigh it).

    Measured on conv-26 and DeepChat's fixture together (docs/evaluation.md, issue 14):
    `rrf_vector_weight` 0.4 — at 1 the vector list's first hit became hybrid's first hit in
    most questions though it is right less often than the lexical one (hybrid R@1 0.25 vs
    lexical 0.35); `weight_coverage` 0.25 adds the lexical rank's coverage of the query, so
    a row covering all of it beats one covering a part at a nearby rank; `weight_period` 0.2
    promotes rows recorded in (or valid during) a period the query names;
    `similarity_floor_gap` 0.4 sets aside vector hits far below the query's best (neutral on
    both files; a guard for embedders whose unrelated texts score high).
    """

    rrf_k: int = attrs.field(default=2, validator=_positive)
    rrf_depth: int | None = attrs.field(default=12, validator=_depth)
    rrf_weight: float = attrs.field(default=1.0, validator=_non_negative)
    rrf_vector_weight: float = attrs.field(default=0.4, validator=_non_negative)
    weight_coverage: float = attrs.field(default=0.25, validator=_non_negative)
    weight_period: float = attrs.field(default=0.2, validator=_non_negative)
    similarity_floor_gap: float | None = attrs.field(default=0.4, validator=_optional_unit)
    weight_similarity: float = attrs.field(default=0.6, validator=_unit)
    weight_recency: float = attrs.field(default=0.25, validator=_unit)
    weight_importance: float = attrs.field(default=0.15, validator=_unit)
    weight_access: float = attrs.field(default=0.0, validator=_unit)
    access_saturation: float = attrs.field(default=8.0, validator=_positive)
    fts_baseline: float = attrs.field(default=0.3, validator=_unit)
    half_life_semantic_days: float = attrs.field(default=14.0, validator=_positive)
    half_life_episodic_days: float = attrs.field(default=30.0, validator=_positive)
    half_life_reflection_days: float = attrs.field(default=60.0, validator=_positive)
    confidence_slope: float = attrs.field(default=0.5, validator=_non_negative)
    importance_floor: float = attrs.field(default=0.15, validator=_unit)
    duplicate_jaccard: float = attrs.field(default=0.9, validator=_threshold)
    temporal: TemporalPolicy = attrs.field(factory=TemporalPolicy)

    @classmethod
    def from_settings(cls, settings: MemorySettings, **overrides: object) -> ScoringPolicy:
        """Settings' fusion constants; the rest keep their defaults unless overridden."""
        values: dict[str, object] = {
            "rrf_k": settings.rrf_k,
            "rrf_depth": 2 * settings.top_k,
            "weight_similarity": settings.weight_similarity,
            "weight_recency": settings.weight_recency,
            "weight_importance": settings.weight_importance,
            "half_life_semantic_days": settings.half_life_semantic_days,
            "half_life_episodic_days": settings.half_life_episodic_days,
            "half_life_reflection_days": settings.half_life_reflection_days,
            "temporal": TemporalPolicy.from_settings(settings),
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    def half_life_days(self, kind: ClaimKind) -> float:
        if kind is ClaimKind.EPISODIC:
            return self.half_life_episodic_days
        if kind is ClaimKind.REFLECTION:
            return self.half_life_reflection_days
        return self.half_life_semantic_days


def _rank(instance: object, attribute: attrs.Attribute, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValidationError(f"candidate.{attribute.name}", "must be a non-negative integer")


@attrs.frozen(kw_only=True)
class Candidate:
    """A re-validated claim with its 0-based rank in each source list it appeared in."""

    claim: Claim
    fts_rank: int | None = attrs.field(default=None, validator=_rank)
    vector_rank: int | None = attrs.field(default=None, validator=_rank)
    similarity: float | None = None  # set exactly when vector_rank is
    coverage: float | None = None  # the lexical rank's share of the query covered, FTS rows

    @property
    def sources(self) -> tuple[CandidateSource, ...]:
        found = []
        if self.fts_rank is not None:
            found.append(CandidateSource.FTS)
        if self.vector_rank is not None:
            found.append(CandidateSource.VECTOR)
        return tuple(found)


def candidates_from_lists(
    fts: Sequence[Claim],
    vector: Sequence[tuple[Claim, float]],
    *,
    fts_ranks: Mapping[str, int] | None = None,
    coverage: Mapping[str, float] | None = None,
) -> tuple[Candidate, ...]:
    """Merge the filtered FTS list (bm25 order) and vector list (similarity order) by claim id.

    Ranks are positions in the lists as given (after re-validation and suppression); a
    repeated id keeps its first (best) position. `fts_ranks` overrides FTS positions — the
    retrieval service passes shared ranks for rows the index scored equally, and each FTS
    row's `coverage` of the query.
    """
    merged: dict[str, Candidate] = {}
    for position, claim in enumerate(fts):
        if claim.id not in merged:
            rank = fts_ranks.get(claim.id, position) if fts_ranks else position
            covered = coverage.get(claim.id) if coverage else None
            merged[claim.id] = Candidate(claim=claim, fts_rank=rank, coverage=covered)
    for rank, (claim, similarity) in enumerate(vector):
        current = merged.get(claim.id)
        if current is None:
            merged[claim.id] = Candidate(claim=claim, vector_rank=rank, similarity=similarity)
        elif current.vector_rank is None:
            merged[claim.id] = attrs.evolve(current, vector_rank=rank, similarity=similarity)
    return tuple(merged.values())


def filter_suppressed(
    candidates: Iterable[Candidate], directives: Iterable[Directive]
) -> tuple[tuple[Candidate, ...], tuple[DroppedItem, ...]]:
    """Drop candidates whose content contains an active, specific suppress topic (R-DIR-2).

    Normalised substring match (NFKC, invisible→space, collapsed, lowercase); stored topics
    that are too broad are ignored, never matched.
    """
    topics = [
        match_text(directive.topic or "")
        for directive in directives
        if directive.kind is DirectiveKind.SUPPRESS_TOPIC
        and directive.is_runtime_eligible
        and is_topic_specific(directive.topic or "")
    ]
    kept: list[Candidate] = []
    dropped: list[DroppedItem] = []
    for candidate in candidates:
        text = match_text(candidate.claim.content)
        if any(topic and topic in text for topic in topics):
            dropped.append(
                DroppedItem(
                    id=candidate.claim.id, kind=candidate.claim.kind, reason=DropReason.SUPPRESSED
                )
            )
        else:
            kept.append(candidate)
    return tuple(kept), tuple(dropped)


@attrs.frozen(kw_only=True)
class ScoredItem:
    """A ranked candidate: the claim, its scores and its temporal verdict."""

    claim: Claim
    score: float  # final = score · temporal factor; what a recall result reports
    combined: float  # the sort key
    sources: tuple[CandidateSource, ...]
    similarity: float | None
    breakdown: ScoreBreakdown
    assessment: TemporalAssessment


@attrs.frozen(kw_only=True)
class Ranking:
    items: tuple[ScoredItem, ...]
    dropped: tuple[DroppedItem, ...]


def _clamp01(value: float) -> float:
    return 0.0 if math.isnan(value) else min(1.0, max(0.0, value))


def _rrf(candidate: Candidate, policy: ScoringPolicy) -> float:
    total = 0.0
    for rank, weight in (
        (candidate.fts_rank, 1.0),
        (candidate.vector_rank, policy.rrf_vector_weight),
    ):
        if rank is not None and (policy.rrf_depth is None or rank < policy.rrf_depth):
            total += weight / (policy.rrf_k + rank + 1)
    return total


def _similarity(candidate: Candidate, policy: ScoringPolicy) -> float:
    if candidate.vector_rank is None or candidate.similarity is None:
        return policy.fts_baseline
    return _clamp01(candidate.similarity)


def _score(
    candidate: Candidate,
    *,
    now: datetime,
    policy: ScoringPolicy,
    mode: TemporalMode,
    periods: QueryPeriods,
) -> ScoredItem | None:
    claim = candidate.claim
    assessment = assess(claim.temporal, now, mode=mode, policy=policy.temporal)
    if not assessment.eligible:
        return None
    similarity = _similarity(candidate, policy)
    age_seconds = max(0.0, (now - claim.created_at).total_seconds())
    recency = 0.5 ** (age_seconds / (policy.half_life_days(claim.kind) * _SECONDS_PER_DAY))
    importance = _clamp01(claim.importance)
    confidence = _clamp01(DEFAULT_CONFIDENCE if claim.confidence is None else claim.confidence)
    access = claim.access_count / (claim.access_count + policy.access_saturation)
    base = (
        policy.weight_similarity * similarity
        + policy.weight_recency * recency
        + policy.weight_importance * importance
        + policy.weight_access * access
    )
    confidence_factor = max(0.0, 1.0 + policy.confidence_slope * (confidence - DEFAULT_CONFIDENCE))
    score = max(base * confidence_factor, policy.importance_floor * importance)
    rrf = _rrf(candidate, policy) + policy.weight_coverage * (candidate.coverage or 0.0)
    if periods and periods.matches(claim):
        # The query names a period the claim was recorded in or holds during: evidence the
        # words alone cannot give (the date of a turn lives in when it was said).
        rrf += policy.weight_period
    factor = assessment.factor
    final = score * factor
    combined = (score + policy.rrf_weight * rrf) * factor
    breakdown = ScoreBreakdown(
        similarity=similarity,
        recency=recency,
        importance=importance,
        confidence=confidence,
        access=access,
        base=base,
        confidence_factor=confidence_factor,
        rrf=rrf,
        score=score,
        temporal_factor=factor,
        temporal_status=assessment.status,
        final=final,
        combined=combined,
    )
    return ScoredItem(
        claim=claim,
        score=final,
        combined=combined,
        sources=candidate.sources,
        similarity=candidate.similarity if candidate.vector_rank is not None else None,
        breakdown=breakdown,
        assessment=assessment,
    )


def _jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    union = len(left | right)
    return len(left & right) / union if union else 0.0


def _merge_duplicate_ids(candidates: Iterable[Candidate]) -> list[Candidate]:
    # The same claim handed over twice keeps its best rank per source: input order must not
    # decide which copy counts.
    merged: dict[str, Candidate] = {}
    for candidate in candidates:
        current = merged.get(candidate.claim.id)
        if current is None:
            merged[candidate.claim.id] = candidate
            continue
        fts = [r for r in (current.fts_rank, candidate.fts_rank) if r is not None]
        best = min(
            (c for c in (current, candidate) if c.vector_rank is not None),
            key=lambda c: (c.vector_rank, -(c.similarity or 0.0)),
            default=None,
        )
        merged[candidate.claim.id] = Candidate(
            claim=current.claim,
            fts_rank=min(fts) if fts else None,
            vector_rank=best.vector_rank if best else None,
            similarity=best.similarity if best else None,
            coverage=max(
                (c.coverage for c in (current, candidate) if c.coverage is not None),
                default=None,
            ),
        )
    return list(merged.values())


def _relative_floor(candidates: list[Candidate], policy: ScoringPolicy) -> list[Candidate]:
    """Vector evidence more than `similarity_floor_gap` below the query's best similarity is
    set aside: what clears a fixed floor depends on the embedder and the script (MiniLM
    scores unrelated Chinese text 0.4–0.5), how far a hit lies below the best does not. A row
    FTS also found keeps its lexical evidence; a row only the vector source found goes."""
    gap = policy.similarity_floor_gap
    best = max((c.similarity for c in candidates if c.similarity is not None), default=None)
    if gap is None or best is None:
        return candidates
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.similarity is None or candidate.similarity >= best - gap:
            kept.append(candidate)
        elif candidate.fts_rank is not None:
            kept.append(attrs.evolve(candidate, vector_rank=None, similarity=None))
    return kept


def rank_candidates(
    candidates: Iterable[Candidate],
    *,
    now: datetime,
    policy: ScoringPolicy,
    mode: TemporalMode = TemporalMode.CURRENT,
    top_k: int | None = None,
    tokens: ClaimTokenCache | None = None,
    periods: QueryPeriods | None = None,
) -> Ranking:
    """Score, filter by time, sort and collapse near-duplicates; keep at most `top_k` items.

    Dropped: every temporally ineligible candidate, and every duplicate (same kind, same or
    nearly the same words) met before `top_k` items were kept (candidates past the cut are
    simply not recalled).
    """
    now = require_utc(now, "now")
    # `is None`, not `or`: an empty cache is falsy and must still be the one that fills.
    cache = ClaimTokenCache() if tokens is None else tokens
    scored: list[ScoredItem] = []
    dropped: list[DroppedItem] = []
    merged = _relative_floor(
        sorted(_merge_duplicate_ids(candidates), key=lambda c: c.claim.id), policy
    )
    for candidate in merged:
        item = _score(
            candidate,
            now=now,
            policy=policy,
            mode=mode,
            periods=periods or QueryPeriods(),
        )
        if item is None:
            dropped.append(
                DroppedItem(
                    id=candidate.claim.id, kind=candidate.claim.kind, reason=DropReason.TEMPORAL
                )
            )
        else:
            scored.append(item)
    scored.sort(key=lambda item: (-item.combined, -item.score, item.claim.id))

    kept: list[ScoredItem] = []
    # Kinds keep their own semantics (R-DOM-1): an episodic record and a semantic fact with
    # the same words are both kept; duplicates collapse within a kind.
    kept_canonical: set[tuple[ClaimKind, str]] = set()
    kept_tokens: list[tuple[ClaimKind, frozenset[str]]] = []
    for item in scored:
        if top_k is not None and len(kept) >= top_k:
            break
        kind = item.claim.kind
        known = cache.of(item.claim)
        canonical, words = known.canonical, known.duplicate
        if (kind, canonical) in kept_canonical or any(
            other_kind is kind and _jaccard(words, other) >= policy.duplicate_jaccard
            for other_kind, other in kept_tokens
        ):
            dropped.append(DroppedItem(id=item.claim.id, kind=kind, reason=DropReason.DUPLICATE))
            continue
        kept.append(item)
        kept_canonical.add((kind, canonical))
        kept_tokens.append((kind, words))
    return Ranking(items=tuple(kept), dropped=tuple(dropped))
