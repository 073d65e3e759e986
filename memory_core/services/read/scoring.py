"""Deterministic scoring and near-duplicate collapse of recall candidates (R-READ-8).

Reference §4.4, with every constant an explicit, tunable input (`ScoringPolicy`), because the
LoCoMo dev baselines show DeepChat's constants are a starting point, not a result:

    rrf        = the candidate's rank evidence (`memory_core.services.read.fusion`)
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
from collections.abc import Iterable
from datetime import datetime

import attrs

from memory_core.domain.claims import DEFAULT_CONFIDENCE, Claim, ClaimKind
from memory_core.domain.directives import Directive, DirectiveKind, is_topic_specific, match_text
from memory_core.domain.errors import ConfigError
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
from memory_core.services.read.fusion import (
    Candidate,
    merge_duplicate_ids,
    rrf_term,
    set_aside_distant_vectors,
)
from memory_core.settings import MemorySettings

__all__ = [
    "Ranking",
    "ScoredItem",
    "ScoringPolicy",
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


def _similarity(candidate: Candidate, policy: ScoringPolicy) -> float:
    if candidate.vector_rank is None or candidate.similarity is None:
        return policy.fts_baseline
    return _clamp01(candidate.similarity)


@attrs.define(slots=True)
class _Scored:
    """One candidate's score terms, before they become a `ScoredItem`: most candidates of a
    turn are scored only to be ranked below the cut, and building (and validating) the
    breakdown and item of each one was a fifth of ranking's cost."""

    candidate: Candidate
    assessment: TemporalAssessment
    similarity: float
    recency: float
    importance: float
    confidence: float
    access: float
    base: float
    confidence_factor: float
    rrf: float
    score: float
    final: float
    combined: float

    def item(self) -> ScoredItem:
        candidate = self.candidate
        breakdown = ScoreBreakdown(
            similarity=self.similarity,
            recency=self.recency,
            importance=self.importance,
            confidence=self.confidence,
            access=self.access,
            base=self.base,
            confidence_factor=self.confidence_factor,
            rrf=self.rrf,
            score=self.score,
            temporal_factor=self.assessment.factor,
            temporal_status=self.assessment.status,
            final=self.final,
            combined=self.combined,
        )
        return ScoredItem(
            claim=candidate.claim,
            score=self.final,
            combined=self.combined,
            sources=candidate.sources,
            similarity=candidate.similarity if candidate.vector_rank is not None else None,
            breakdown=breakdown,
            assessment=self.assessment,
        )


def _score(
    candidate: Candidate,
    *,
    now: datetime,
    policy: ScoringPolicy,
    mode: TemporalMode,
    periods: QueryPeriods,
) -> _Scored | None:
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
    rrf = rrf_term(candidate, policy, in_named_period=bool(periods) and periods.matches(claim))
    factor = assessment.factor
    return _Scored(
        candidate=candidate,
        assessment=assessment,
        similarity=similarity,
        recency=recency,
        importance=importance,
        confidence=confidence,
        access=access,
        base=base,
        confidence_factor=confidence_factor,
        rrf=rrf,
        score=score,
        final=score * factor,
        combined=(score + policy.rrf_weight * rrf) * factor,
    )


def _jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    union = len(left | right)
    return len(left & right) / union if union else 0.0


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
    scored: list[_Scored] = []
    dropped: list[DroppedItem] = []
    merged = set_aside_distant_vectors(
        sorted(merge_duplicate_ids(candidates), key=lambda c: c.claim.id), policy
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
    scored.sort(key=lambda item: (-item.combined, -item.final, item.candidate.claim.id))

    kept: list[ScoredItem] = []
    # Kinds keep their own semantics (R-DOM-1): an episodic record and a semantic fact with
    # the same words are both kept; duplicates collapse within a kind.
    kept_canonical: set[tuple[ClaimKind, str]] = set()
    kept_tokens: list[tuple[ClaimKind, frozenset[str]]] = []
    for terms in scored:
        if top_k is not None and len(kept) >= top_k:
            break
        claim = terms.candidate.claim
        kind = claim.kind
        known = cache.of(claim)
        canonical, words = known.canonical, known.duplicate
        if (kind, canonical) in kept_canonical or any(
            other_kind is kind and _jaccard(words, other) >= policy.duplicate_jaccard
            for other_kind, other in kept_tokens
        ):
            dropped.append(DroppedItem(id=claim.id, kind=kind, reason=DropReason.DUPLICATE))
            continue
        kept.append(terms.item())
        kept_canonical.add((kind, canonical))
        kept_tokens.append((kind, words))
    return Ranking(items=tuple(kept), dropped=tuple(dropped))
