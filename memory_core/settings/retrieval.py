"""Retrieval: how many memories a query recalls, how candidates are gathered and scored, and
the temporal policy that weighs states outside the asked-for window (R-READ-4, R-READ-8,
R-TIME-3)."""

from __future__ import annotations

import attrs

from memory_core.settings.fields import doc, positive, unit

__all__ = ["RetrievalSettings"]


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class RetrievalSettings:
    top_k: int = attrs.field(
        default=6,
        validator=[positive, attrs.validators.le(100)],
        metadata=doc("Memories recalled per query (1..100)."),
    )
    rrf_k: int = attrs.field(
        # Measured, not DeepChat's 60: RRF is added to a base score, so only a small k lets
        # rank count (docs/evaluation.md: k=2 beats k=60 on LoCoMo and DeepChat's fixture).
        default=2,
        validator=[positive, attrs.validators.le(1_000)],
        metadata=doc("Reciprocal-rank-fusion constant (small: RRF adds to a base score)."),
    )
    weight_similarity: float = attrs.field(
        default=0.6, validator=unit, metadata=doc("Score weight of vector similarity.")
    )
    weight_recency: float = attrs.field(
        default=0.25, validator=unit, metadata=doc("Score weight of recency.")
    )
    weight_importance: float = attrs.field(
        default=0.15, validator=unit, metadata=doc("Score weight of importance.")
    )
    half_life_semantic_days: float = attrs.field(
        default=14.0, validator=positive, metadata=doc("Recency half-life of semantic claims.")
    )
    half_life_episodic_days: float = attrs.field(
        default=30.0, validator=positive, metadata=doc("Recency half-life of episodic claims.")
    )
    half_life_reflection_days: float = attrs.field(
        default=60.0, validator=positive, metadata=doc("Recency half-life of reflections.")
    )
    similarity_threshold: float = attrs.field(
        default=0.2,
        validator=unit,
        metadata=doc("Vector hits below this similarity are dropped."),
    )
    refill_growth: int = attrs.field(
        default=4,
        validator=attrs.validators.ge(2),
        metadata=doc("Geometric growth of a source's candidate limit on refill."),
    )
    candidate_cap_per_source: int = attrs.field(
        default=800, validator=positive, metadata=doc("Hard cap of candidates per source.")
    )
    vector_initial_limit: int = attrs.field(
        default=400,
        validator=positive,
        metadata=doc("Cap of the first vector oversampling (before refills); 100 × 4."),
    )
    query_prefix_code_points: int = attrs.field(
        default=8_000,
        validator=positive,
        metadata=doc("Code points of a message, from its first visible one, that a query reads."),
    )
    temporal_hard_filter_confidence: float = attrs.field(
        default=0.8,
        validator=unit,
        metadata=doc("States resolved at least this confidently are filtered when out of window."),
    )
    temporal_uncertain_factor: float = attrs.field(
        default=0.65,
        validator=unit,
        metadata=doc("Score factor of an out-of-window state resolved with low confidence."),
    )
