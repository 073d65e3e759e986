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
import operator
from collections.abc import Iterable
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
from memory_core.domain.temporal import TemporalMetadata, require_utc
from memory_core.domain.temporal_policy import (
    TemporalAssessment,
    TemporalMode,
    TemporalPolicy,
    assessor,
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
    "TurnVerdicts",
    "filter_suppressed",
    "rank_candidates",
    "token_set",
]

_SECONDS_PER_DAY = 86_400.0
# Iterating an Enum class runs a Python generator each time; the kinds never change.
_KINDS = tuple(ClaimKind)


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


def _unit_value(value: float) -> float:
    # `_clamp01`'s answer without its three calls for the common case: a float strictly
    # inside (0, 1) is its own clamp (0.0, 1.0, ints and -0.0 take the exact old path, so
    # the reported value keeps its type and sign).
    return value if value.__class__ is float and 0.0 < value < 1.0 else _clamp01(value)


class TurnVerdicts:
    """One turn's temporal verdicts: `assess` once per claim revision, shared by the retrieval
    service's eligibility count (which decides whether to refill) and the ranking, which
    drops what is ineligible — each used to judge every candidate again, and the count with
    the default policy rather than the ranking's.

    `now` is checked once here; the metadata is compared too, so a row rewritten without a
    revision bump is judged again rather than given its old verdict."""

    __slots__ = ("_found", "_judge", "mode", "now", "policy")

    def __init__(self, *, now: datetime, mode: TemporalMode, policy: TemporalPolicy) -> None:
        self.now = require_utc(now, "now")
        self.mode = mode
        self.policy = policy
        self._judge = assessor(self.now, mode=mode, policy=policy)
        self._found: dict[tuple[str, int], tuple[TemporalMetadata, TemporalAssessment]] = {}

    def of(self, claim: Claim) -> TemporalAssessment:
        key = (claim.id, claim.revision)
        found = self._found.get(key)
        metadata = claim.temporal
        if found is not None and (found[0] is metadata or found[0] == metadata):
            return found[1]
        assessment = self._judge(metadata)
        self._found[key] = (metadata, assessment)
        return assessment

    def eligible(self, claim: Claim) -> bool:
        return self.of(claim).eligible


# similarity, recency, importance, confidence, access, base, confidence factor, rrf, score,
# final, combined: one candidate's score terms, a tuple because most candidates of a turn are
# scored only to be ranked below the cut (building and validating every one's breakdown and
# item was a fifth of ranking's cost).
_Terms = tuple[float, float, float, float, float, float, float, float, float, float, float]
_Entry = tuple[float, float, str, Candidate, TemporalAssessment, _Terms]


def _item(candidate: Candidate, assessment: TemporalAssessment, terms: _Terms) -> ScoredItem:
    """The full item of a kept candidate."""
    similarity, recency, importance, confidence, access, base, c_factor, rrf, score = terms[:9]
    final, combined = terms[9], terms[10]
    breakdown = ScoreBreakdown(
        similarity=similarity,
        recency=recency,
        importance=importance,
        confidence=confidence,
        access=access,
        base=base,
        confidence_factor=c_factor,
        rrf=rrf,
        score=score,
        temporal_factor=assessment.factor,
        temporal_status=assessment.status,
        final=final,
        combined=combined,
    )
    return ScoredItem(
        claim=candidate.claim,
        score=final,
        combined=combined,
        sources=candidate.sources,
        similarity=candidate.similarity if candidate.vector_rank is not None else None,
        breakdown=breakdown,
        assessment=assessment,
    )


def _scored(
    candidates: Iterable[Candidate],
    *,
    now: datetime,
    policy: ScoringPolicy,
    verdicts: TurnVerdicts,
    periods: QueryPeriods,
    dropped: list[DroppedItem],
) -> list[_Entry]:
    """Each eligible candidate's sort key, verdict and terms; ineligible ones into `dropped`.

    The formula of the module docstring, with what is the same for every candidate (the
    half-lives in seconds, the weights, whether the query names a period) looked up once."""
    half_life = {kind: policy.half_life_days(kind) * _SECONDS_PER_DAY for kind in _KINDS}
    named_period = bool(periods)
    w_sim, w_rec = policy.weight_similarity, policy.weight_recency
    w_imp, w_acc = policy.weight_importance, policy.weight_access
    saturation, slope = policy.access_saturation, policy.confidence_slope
    floor, rrf_weight = policy.importance_floor, policy.rrf_weight
    scored: list[_Entry] = []
    for candidate in candidates:
        claim = candidate.claim
        assessment = verdicts.of(claim)
        if not assessment.eligible:
            dropped.append(DroppedItem(id=claim.id, kind=claim.kind, reason=DropReason.TEMPORAL))
            continue
        if candidate.vector_rank is None or candidate.similarity is None:
            similarity = policy.fts_baseline
        else:
            similarity = _unit_value(candidate.similarity)
        # `x if x > 0.0 else 0.0` is `max(0.0, x)` exactly (NaN and -0.0 included) without
        # a builtin call: three of them per candidate were a tenth of the loop.
        age_seconds = (now - claim.created_at).total_seconds()
        age_seconds = age_seconds if age_seconds > 0.0 else 0.0
        recency = 0.5 ** (age_seconds / half_life[claim.kind])
        importance = _unit_value(claim.importance)
        confidence = _unit_value(
            DEFAULT_CONFIDENCE if claim.confidence is None else claim.confidence
        )
        access = claim.access_count / (claim.access_count + saturation)
        base = w_sim * similarity + w_rec * recency + w_imp * importance + w_acc * access
        confidence_factor = 1.0 + slope * (confidence - DEFAULT_CONFIDENCE)
        confidence_factor = confidence_factor if confidence_factor > 0.0 else 0.0
        score, floored = base * confidence_factor, floor * importance
        score = floored if floored > score else score  # max(score, floored), ties to score
        rrf = rrf_term(candidate, policy, in_named_period=named_period and periods.matches(claim))
        factor = assessment.factor
        final = score * factor
        combined = (score + rrf_weight * rrf) * factor
        terms = (
            similarity,
            recency,
            importance,
            confidence,
            access,
            base,
            confidence_factor,
            rrf,
            score,
            final,
            combined,
        )
        scored.append((-combined, -final, claim.id, candidate, assessment, terms))
    return scored


_DROPPED_ID = operator.attrgetter("id")


def _jaccard_at_least(left: frozenset[str], right: frozenset[str], threshold: float) -> bool:
    # |A ∩ B| <= min and |A ∪ B| >= max, so min/max bounds the Jaccard index from above:
    # below the threshold the sets are no near-duplicates and need no intersection (float
    # division is monotone, so the bound holds for the computed values too).
    small, large = len(left), len(right)
    if small > large:
        small, large = large, small
    if not large or small / large < threshold:
        return False
    # |A ∪ B| = |A| + |B| − |A ∩ B|, an exact integer: one set operation instead of two.
    shared = len(left & right)
    return shared / (small + large - shared) >= threshold


def rank_candidates(
    candidates: Iterable[Candidate],
    *,
    now: datetime,
    policy: ScoringPolicy,
    mode: TemporalMode = TemporalMode.CURRENT,
    top_k: int | None = None,
    tokens: ClaimTokenCache | None = None,
    periods: QueryPeriods | None = None,
    verdicts: TurnVerdicts | None = None,
) -> Ranking:
    """Score, filter by time, sort and collapse near-duplicates; keep at most `top_k` items.

    Dropped: every temporally ineligible candidate, and every duplicate (same kind, same or
    nearly the same words) met before `top_k` items were kept (candidates past the cut are
    simply not recalled). `verdicts`, when given, must judge at `now` in `mode` under
    `policy.temporal` (the retrieval service's, shared with its eligibility count).
    """
    now = require_utc(now, "now")
    if verdicts is None:
        verdicts = TurnVerdicts(now=now, mode=mode, policy=policy.temporal)
    elif (verdicts.now, verdicts.mode, verdicts.policy) != (now, mode, policy.temporal):
        raise ValidationError("verdicts", "judged at another instant, mode or policy")
    # `is None`, not `or`: an empty cache is falsy and must still be the one that fills.
    cache = ClaimTokenCache() if tokens is None else tokens
    dropped: list[DroppedItem] = []
    merged = set_aside_distant_vectors(merge_duplicate_ids(candidates), policy)
    scored = _scored(
        merged,
        now=now,
        policy=policy,
        verdicts=verdicts,
        periods=periods or QueryPeriods(),
        dropped=dropped,
    )
    # The ranking is a total order, so the candidates needed no order of their own (they
    # were sorted by id for it): only the temporal drops are reported in id order.
    dropped.sort(key=_DROPPED_ID)
    # combined DESC, final DESC, id ASC: an entry's first three fields. Ids are unique after
    # the merge, so no comparison goes past the id and the entries sort as they are.
    scored.sort()

    kept: list[ScoredItem] = []
    # Kinds keep their own semantics (R-DOM-1): an episodic record and a semantic fact with
    # the same words are both kept; duplicates collapse within a kind, so each kind's kept
    # token sets are listed apart (in the order kept) and a candidate meets only its own.
    kept_canonical: set[tuple[ClaimKind, str]] = set()
    kept_tokens: dict[ClaimKind, list[frozenset[str]]] = {}
    threshold = policy.duplicate_jaccard
    for _, _, _, candidate, assessment, terms in scored:
        if top_k is not None and len(kept) >= top_k:
            break
        claim = candidate.claim
        kind = claim.kind
        canonical, words = cache.collapse(claim)
        same_kind = kept_tokens.setdefault(kind, [])
        if (kind, canonical) in kept_canonical or any(
            _jaccard_at_least(words, other, threshold) for other in same_kind
        ):
            dropped.append(DroppedItem(id=claim.id, kind=kind, reason=DropReason.DUPLICATE))
            continue
        kept.append(_item(candidate, assessment, terms))
        kept_canonical.add((kind, canonical))
        same_kind.append(words)
    return Ranking(items=tuple(kept), dropped=tuple(dropped))
