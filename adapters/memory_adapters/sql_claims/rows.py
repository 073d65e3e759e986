"""Storage rows ⇄ domain values.

`ClaimRow` and `DirectiveRow` mirror their tables column for column, in domain types:
instants are aware UTC datetimes and source entry ids a tuple, whatever the column type.
Their annotations are the column types a dialect's `RowReader` (row_reader.py) checks and
converts on the way in; `claim_of` / `to_directive` build the domain value, whose
validators reject a row that a raw writer corrupted: that one row is skipped by list
reads, never the batch (R-TIME-4), and named by id only, never by content.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import attrs

from memory_core.domain.claims import (
    Claim,
    ClaimDraft,
    ClaimSource,
    EmbeddingIdentity,
    EmbeddingState,
    Lifecycle,
)
from memory_core.domain.directives import Directive
from memory_core.domain.errors import AgentMemoryError, StoreError
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import ATEMPORAL, Interval, TemporalMetadata
from memory_core.storage.drafts import PreparedDraft

__all__ = [
    "CLAIM_COLUMNS",
    "DIRECTIVE_COLUMNS",
    "ClaimRow",
    "CorruptRow",
    "DirectiveRow",
    "claim_of",
    "inserted_claim",
    "temporal_columns",
]


class CorruptRow(StoreError):
    """A stored row no longer satisfies the domain's invariants; startup repair fixes it."""


def temporal_columns(meta: TemporalMetadata) -> dict[str, Any]:
    """The six temporal columns of `meta`, as bound values."""
    return {
        "temporal_kind": meta.kind.value,
        "valid_from": meta.interval.valid_from,
        "valid_until": meta.interval.valid_until,
        "temporal_precision": meta.precision.value if meta.precision else None,
        "temporal_timezone": meta.timezone,
        "temporal_confidence": meta.confidence,
    }


@attrs.frozen(kw_only=True)
class ClaimRow:
    """One `agent_memory` row, column for column (SQLite's rowid aside)."""

    id: str
    agent_id: str
    kind: str
    content: str
    canonical_content: str
    category: str | None = None
    importance: float = 0.5
    confidence: float | None = None
    temporal_kind: str = "atemporal"
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    temporal_precision: str | None = None
    temporal_timezone: str | None = None
    temporal_confidence: float | None = None
    scope_type: str = "agent"
    scope_id: str | None = None
    user_scope: str | None = None
    provenance_key: str | None = None
    source_session: str | None = None
    source_entry_ids: tuple[str, ...] = ()
    source_first_seq: int | None = None
    source_last_seq: int | None = None
    extractor: str | None = None
    lifecycle_state: str = "active"
    embedding_state: str = "pending"
    embedding_provider: str | None = None
    embedding_model: str | None = None
    embedding_dim: int | None = None
    revision: int = 1
    created_at: datetime
    updated_at: datetime
    last_accessed: datetime | None = None
    access_count: int = 0
    superseded_by: str | None = None
    slot: str | None = None
    conflict_with: str | None = None
    conflict_state: str | None = None

    @classmethod
    def from_prepared(cls, prepared: PreparedDraft, *, claim_id: str, now: datetime) -> ClaimRow:
        draft = prepared.draft
        return cls(
            id=claim_id,
            agent_id=draft.agent_id,
            kind=draft.kind.value,
            content=prepared.content,
            canonical_content=prepared.canonical,
            category=draft.category.value if draft.category else None,
            importance=draft.effective_importance,
            confidence=draft.confidence,
            **temporal_columns(prepared.temporal),
            scope_type=draft.scope.kind.value,
            scope_id=draft.scope.scope_id,
            user_scope=draft.scope.legacy_user_shadow,
            provenance_key=prepared.key,
            source_session=draft.source.session_id,
            source_entry_ids=tuple(draft.source.entry_ids),
            source_first_seq=draft.source.first_order_seq,
            source_last_seq=draft.source.last_order_seq,
            extractor=draft.source.extractor,
            embedding_state=(
                EmbeddingState.NOT_APPLICABLE if draft.kind.is_internal else EmbeddingState.PENDING
            ).value,
            created_at=now,
            updated_at=now,
            slot=draft.slot,
        )

    def scope(self) -> Scope:
        return Scope(kind=self.scope_type, scope_id=self.scope_id)  # type: ignore[arg-type]

    def values(self) -> tuple[Any, ...]:
        """The column values in CLAIM_COLUMNS order (what `attrs.astuple(row, recurse=False)`
        gives, by one attribute getter instead of attrs' generic walk: issue 15)."""
        return _COLUMN_VALUES(self)

    def to_claim(self) -> Claim:
        return claim_of(self.values())


def inserted_claim(row: ClaimRow, draft: ClaimDraft, temporal: TemporalMetadata) -> Claim:
    """The claim as `get` will read it back, built from the already validated draft values
    (re-validating every field of every inserted row is most of an insert's cost)."""
    return Claim(
        id=row.id,
        agent_id=row.agent_id,
        kind=draft.kind,
        content=row.content,
        canonical_content=row.canonical_content,
        category=draft.category,
        importance=row.importance,
        confidence=draft.confidence,
        temporal=temporal,
        scope=draft.scope,
        provenance_key=row.provenance_key,
        source=draft.source,
        lifecycle=Lifecycle.ACTIVE,
        embedding_state=EmbeddingState(row.embedding_state),
        created_at=row.created_at,
        updated_at=row.updated_at,
        slot=draft.slot,
    )


@attrs.frozen(kw_only=True)
class DirectiveRow:
    """One `agent_memory_directive` row."""

    agent_id: str
    id: str
    kind: str
    status: str
    source: str
    content: str
    normalized_topic: str | None = None
    identity_hash: str
    created_at: datetime
    updated_at: datetime

    def to_directive(self) -> Directive:
        try:
            return Directive(
                id=self.id,
                agent_id=self.agent_id,
                kind=self.kind,  # type: ignore[arg-type]
                status=self.status,  # type: ignore[arg-type]
                source=self.source,  # type: ignore[arg-type]
                content=self.content,
                topic=self.normalized_topic,
                identity_hash=self.identity_hash,
                created_at=self.created_at,
                updated_at=self.updated_at,
            )
        except (AgentMemoryError, ValueError, TypeError) as exc:
            raise CorruptRow(f"directive row {self.id} violates the domain model") from exc


CLAIM_COLUMNS: tuple[str, ...] = tuple(field.name for field in attrs.fields(ClaimRow))
_COLUMN_VALUES = operator.attrgetter(*CLAIM_COLUMNS)
DIRECTIVE_COLUMNS: tuple[str, ...] = tuple(field.name for field in attrs.fields(DirectiveRow))


# Claims of the common shapes share these equal values instead of building them per row:
# agent scope, no temporal metadata, no source. Narrow scopes and embedding identities are
# few per store and held once validated (a bounded number; neither holds claim content).
_AGENT_SCOPE = Scope.agent()
_NO_SOURCE = ClaimSource()
_HELD_VALUES = 256
_SCOPES: dict[tuple[str, str | None], Scope] = {}
_IDENTITIES: dict[tuple[str, str, int], EmbeddingIdentity] = {}


def _scope(kind: str, scope_id: str | None) -> Scope:
    if kind == "agent" and scope_id is None:
        return _AGENT_SCOPE
    scope = _SCOPES.get((kind, scope_id))
    if scope is None:
        scope = Scope(kind=kind, scope_id=scope_id)  # type: ignore[arg-type]
        if len(_SCOPES) >= _HELD_VALUES:
            _SCOPES.clear()  # bounded by starting over; single dict operations are atomic
        _SCOPES[kind, scope_id] = scope
    return scope


def _identity(provider: str, model: str, dim: int) -> EmbeddingIdentity:
    identity = _IDENTITIES.get((provider, model, dim))
    if identity is None:
        identity = EmbeddingIdentity(provider=provider, model=model, dim=dim)
        if len(_IDENTITIES) >= _HELD_VALUES:
            _IDENTITIES.clear()
        _IDENTITIES[provider, model, dim] = identity
    return identity


def claim_of(values: Sequence[Any]) -> Claim:
    """The domain claim of one row's column values (CLAIM_COLUMNS order) as their column
    types read them (`RowReader` checks and converts them); the domain's constructors
    judge the rest, and a row they reject is a CorruptRow."""
    (
        claim_id, agent_id, kind, content, canonical_content, category, importance, confidence,
        temporal_kind, valid_from, valid_until, precision, timezone, temporal_confidence,
        scope_type, scope_id, _user_scope, provenance_key,
        source_session, entry_ids, first_seq, last_seq, extractor,
        lifecycle_state, embedding_state, provider, model, dim, revision,
        created_at, updated_at, last_accessed, access_count, superseded_by, slot,
        _conflict_with, _conflict_state,
    ) = values  # fmt: skip
    try:
        if (
            temporal_kind == "atemporal"
            and valid_from is None
            and valid_until is None
            and precision is None
            and timezone is None
            and temporal_confidence is None
        ):
            temporal = ATEMPORAL
        else:
            temporal = TemporalMetadata(
                kind=temporal_kind,
                interval=Interval(valid_from=valid_from, valid_until=valid_until),
                precision=precision,
                timezone=timezone,
                confidence=temporal_confidence,
            )
        if (
            source_session is None
            and not entry_ids
            and first_seq is None
            and last_seq is None
            and extractor is None
        ):
            source = _NO_SOURCE
        else:
            source = ClaimSource(
                session_id=source_session,
                entry_ids=entry_ids,
                first_order_seq=first_seq,
                last_order_seq=last_seq,
                extractor=extractor,
            )
        return Claim(
            id=claim_id,
            agent_id=agent_id,
            kind=kind,
            content=content,
            canonical_content=canonical_content,
            category=category,
            importance=importance,
            confidence=confidence,
            temporal=temporal,
            scope=_scope(scope_type, scope_id),
            provenance_key=provenance_key,
            source=source,
            lifecycle=lifecycle_state,
            embedding_state=embedding_state,
            embedding=_identity(provider, model, dim) if provider and model and dim else None,
            revision=revision,
            created_at=created_at,
            updated_at=updated_at,
            last_accessed_at=last_accessed,
            access_count=access_count,
            superseded_by=superseded_by,
            slot=slot,
        )
    except (AgentMemoryError, ValueError, TypeError) as exc:
        raise CorruptRow(f"claim row {claim_id} violates the domain model") from exc
