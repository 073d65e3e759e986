"""Storage rows ⇄ domain values (CONVENTIONS: one converter per boundary, here one per
dialect, built by `row_converter`).

`ClaimRow` and `DirectiveRow` mirror their tables column for column, in domain types:
instants are aware UTC datetimes and source entry ids a tuple, whatever the column type.
The dialect's converter checks each column's stored type on the way in; `to_claim` /
`to_directive` build the domain value, whose validators reject a row that a raw writer
corrupted: that one row is skipped by list reads, never the batch (R-TIME-4), and named by
id only, never by content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import attrs
import cattrs

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
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.storage.drafts import PreparedDraft

__all__ = [
    "CLAIM_COLUMNS",
    "DIRECTIVE_COLUMNS",
    "ClaimRow",
    "CorruptRow",
    "DirectiveRow",
    "inserted_claim",
    "row_converter",
    "structure_row",
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

    def to_claim(self) -> Claim:
        try:
            embedding = None
            if self.embedding_provider and self.embedding_model and self.embedding_dim:
                embedding = EmbeddingIdentity(
                    provider=self.embedding_provider,
                    model=self.embedding_model,
                    dim=self.embedding_dim,
                )
            return Claim(
                id=self.id,
                agent_id=self.agent_id,
                kind=self.kind,  # type: ignore[arg-type]
                content=self.content,
                canonical_content=self.canonical_content,
                category=self.category,  # type: ignore[arg-type]
                importance=self.importance,
                confidence=self.confidence,
                temporal=TemporalMetadata(
                    kind=self.temporal_kind,  # type: ignore[arg-type]
                    interval=Interval(valid_from=self.valid_from, valid_until=self.valid_until),
                    precision=self.temporal_precision,  # type: ignore[arg-type]
                    timezone=self.temporal_timezone,
                    confidence=self.temporal_confidence,
                ),
                scope=self.scope(),
                provenance_key=self.provenance_key,
                source=ClaimSource(
                    session_id=self.source_session,
                    entry_ids=self.source_entry_ids,
                    first_order_seq=self.source_first_seq,
                    last_order_seq=self.source_last_seq,
                    extractor=self.extractor,
                ),
                lifecycle=Lifecycle(self.lifecycle_state),
                embedding_state=EmbeddingState(self.embedding_state),
                embedding=embedding,
                revision=self.revision,
                created_at=self.created_at,
                updated_at=self.updated_at,
                last_accessed_at=self.last_accessed,
                access_count=self.access_count,
                superseded_by=self.superseded_by,
                slot=self.slot,
            )
        except (AgentMemoryError, ValueError, TypeError) as exc:
            raise CorruptRow(f"claim row {self.id} violates the domain model") from exc


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
DIRECTIVE_COLUMNS: tuple[str, ...] = tuple(field.name for field in attrs.fields(DirectiveRow))


def _strict(kind: type, accepted: tuple[type, ...]) -> Callable[[Any, type], Any]:
    def structure(value: Any, _: type) -> Any:
        # Drivers hand back REAL columns holding whole numbers as int; bool is never a number.
        if isinstance(value, bool) or not isinstance(value, accepted):
            raise TypeError(f"expected {kind.__name__}")
        return kind(value) if kind is float else value

    return structure


def row_converter(
    *,
    instant: Callable[[Any], datetime],
    entry_ids: Callable[[Any], tuple[str, ...]],
) -> cattrs.Converter:
    """A strict converter for one dialect: `instant` reads a stored time column and
    `entry_ids` the stored source-entry list, each raising TypeError/ValueError on a value
    of the wrong type."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(float, _strict(float, (int, float)))
    converter.register_structure_hook(int, _strict(int, (int,)))
    converter.register_structure_hook(str, _strict(str, (str,)))
    converter.register_structure_hook(datetime, lambda value, _: instant(value))
    converter.register_structure_hook_func(
        lambda cls: cls == tuple[str, ...], lambda value, _: entry_ids(value)
    )
    return converter


R = TypeVar("R", ClaimRow, DirectiveRow)


def structure_row(converter: cattrs.Converter, values: Sequence[Any], cls: type[R]) -> R:
    """Build a row object from a SELECT of `cls`'s columns in declaration order."""
    names = CLAIM_COLUMNS if cls is ClaimRow else DIRECTIVE_COLUMNS
    mapping: Mapping[str, Any] = dict(zip(names, values, strict=True))
    try:
        return converter.structure(mapping, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        ident = mapping.get("id", "?")
        raise CorruptRow(f"{cls.__name__} {ident} has a column of the wrong type") from exc
