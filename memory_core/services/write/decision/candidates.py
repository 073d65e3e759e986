"""Candidate preparation for the write decision step (reference §7.4, §7.6).

An extractor's candidates become claim drafts: normalised, over-long ones rejected (never
truncated), kinds fixed by category, importance floors applied, and duplicates within one
batch — same kind and canonical content — merged with their temporal metadata reconciled.
Malformed input rejects that one candidate, never the batch (R-TIME-4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import attrs

from memory_core.domain.claims import (
    CATEGORY_IMPORTANCE_FLOORS,
    ClaimDraft,
    ClaimKind,
    ClaimSource,
    WriteOrigin,
    kind_for_category,
)
from memory_core.domain.errors import TemporalError, ValidationError
from memory_core.domain.provenance import canonical_content
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import TemporalMetadata
from memory_core.ports.extraction import CandidateClaim, RejectionReason

__all__ = [
    "PreparedBatch",
    "WriteContext",
    "prepare_candidates",
    "reconcile_equivalent",
    "reconcile_merged",
]

_EXTRACTABLE_KINDS = frozenset({ClaimKind.SEMANTIC, ClaimKind.EPISODIC})


@attrs.frozen(kw_only=True)
class WriteContext:
    """Where a batch of candidates comes from and where it goes."""

    agent_id: str
    now: datetime  # write time: the domain clock's now
    said_at: datetime | None = None  # when the source was said (a backdated import); None: now
    scope: Scope = attrs.field(factory=Scope.agent)  # automatic extraction: Agent (R-SCOPE-2)
    session_id: str | None = None
    extractor: str | None = None
    entry_order: Mapping[str, int] = attrs.field(factory=dict)  # span entry id -> order_seq
    origin: WriteOrigin = WriteOrigin.EXTRACTION


# --- temporal reconciliation (reference §7.6) ------------------------------------------


def _same_interpretation(a: TemporalMetadata, b: TemporalMetadata) -> bool:
    return (a.kind, a.interval, a.precision, a.timezone) == (
        b.kind,
        b.interval,
        b.precision,
        b.timezone,
    )


def _surer(a: TemporalMetadata, b: TemporalMetadata) -> TemporalMetadata:
    return b if (b.confidence or 0.0) > (a.confidence or 0.0) else a


def reconcile_equivalent(
    existing: TemporalMetadata, incoming: TemporalMetadata
) -> TemporalMetadata:
    """Metadata of two statements of the same content: a dated reading beats an atemporal
    one; of two different readings the existing stands; of one reading, the surer copy."""
    if incoming.is_atemporal:
        return existing
    if existing.is_atemporal:
        return incoming
    if not _same_interpretation(existing, incoming):
        return existing
    return _surer(existing, incoming)


def reconcile_merged(
    merged_content: str,
    *,
    existing_content: str,
    existing: TemporalMetadata,
    incoming_content: str,
    incoming: TemporalMetadata,
) -> TemporalMetadata:
    """Metadata of a model-merged text: that of the side it repeats; otherwise the dated
    side, or — when both are dated differently — atemporal, because guessing one reading
    would make a permanent wrong fact."""
    merged = canonical_content(merged_content)
    equals_existing = merged == canonical_content(existing_content)
    equals_incoming = merged == canonical_content(incoming_content)
    if equals_existing and equals_incoming:
        return reconcile_equivalent(existing, incoming)
    if equals_existing:
        return existing
    if equals_incoming:
        return incoming
    if existing.is_atemporal:
        return incoming
    if incoming.is_atemporal:
        return existing
    if not _same_interpretation(existing, incoming):
        return TemporalMetadata()
    return _surer(existing, incoming)


# --- candidate preparation --------------------------------------------------------------


@attrs.frozen(kw_only=True)
class PreparedBatch:
    drafts: tuple[ClaimDraft, ...]
    rejected: tuple[str, ...]
    merged: int


def _source(context: WriteContext, candidate: CandidateClaim) -> ClaimSource:
    ids = candidate.source_entry_ids or tuple(context.entry_order)
    seqs = [context.entry_order[i] for i in ids if i in context.entry_order]
    return ClaimSource(
        session_id=context.session_id,
        entry_ids=ids,
        first_order_seq=min(seqs) if seqs else None,
        last_order_seq=max(seqs) if seqs else None,
        extractor=context.extractor,
    )


def _draft(context: WriteContext, candidate: CandidateClaim, limit: int) -> ClaimDraft | str:
    """The draft of one candidate, or the reason code it is rejected with."""
    content = canonical_content(candidate.content)
    if not content:
        return RejectionReason.EMPTY_CONTENT.value
    if len(content) > limit:
        return RejectionReason.CANDIDATE_TOO_LARGE.value  # rejected, never truncated
    kind = kind_for_category(candidate.category, candidate.kind)
    if kind not in _EXTRACTABLE_KINDS:
        return RejectionReason.INVALID_CANDIDATE.value
    floor = CATEGORY_IMPORTANCE_FLOORS.get(candidate.category, 0.0) if candidate.category else 0.0
    try:
        return ClaimDraft(
            agent_id=context.agent_id,
            kind=kind,
            content=content,
            category=candidate.category,
            importance=max(candidate.importance, floor),
            confidence=candidate.confidence,
            temporal=candidate.temporal,
            scope=context.scope,
            source=_source(context, candidate),
            slot=candidate.slot,
        )
    except TemporalError:
        return RejectionReason.INVALID_TEMPORAL.value
    except ValidationError:
        return RejectionReason.INVALID_CANDIDATE.value


def _merge(first: ClaimDraft, second: ClaimDraft) -> ClaimDraft:
    confidences = [c for c in (first.confidence, second.confidence) if c is not None]
    ids = tuple(dict.fromkeys((*first.source.entry_ids, *second.source.entry_ids)))
    seqs = [
        s
        for s in (
            first.source.first_order_seq,
            first.source.last_order_seq,
            second.source.first_order_seq,
            second.source.last_order_seq,
        )
        if s is not None
    ]
    return attrs.evolve(
        first,
        category=first.category or second.category,
        importance=max(first.importance, second.importance),
        confidence=max(confidences) if confidences else None,
        temporal=reconcile_equivalent(first.temporal, second.temporal),
        slot=first.slot or second.slot,
        source=attrs.evolve(
            first.source,
            entry_ids=ids,
            first_order_seq=min(seqs) if seqs else None,
            last_order_seq=max(seqs) if seqs else None,
        ),
    )


def prepare_candidates(
    context: WriteContext,
    candidates: Sequence[CandidateClaim],
    *,
    max_code_points: int,
) -> PreparedBatch:
    """Normalised drafts in first-seen order, one per (kind, canonical content); rejected
    candidates as reason codes. Malformed input rejects that candidate only (R-TIME-4)."""
    drafts: dict[tuple[ClaimKind, str], ClaimDraft] = {}
    rejected: list[str] = []
    merged = 0
    for candidate in candidates:
        draft = _draft(context, candidate, max_code_points)
        if isinstance(draft, str):
            rejected.append(draft)
            continue
        key = (draft.kind, draft.content)
        if key in drafts:
            drafts[key] = _merge(drafts[key], draft)
            merged += 1
        else:
            drafts[key] = draft
    return PreparedBatch(drafts=tuple(drafts.values()), rejected=tuple(rejected), merged=merged)
