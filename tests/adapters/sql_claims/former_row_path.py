"""The row → Claim path the RowReader replaced (a strict cattrs converter into `ClaimRow`,
then the domain's constructors), kept verbatim as the reference the equivalence tests and
the row benchmark compare the new path with. Test support only."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import cattrs

from memory_adapters.sql_claims.rows import CLAIM_COLUMNS, ClaimRow, CorruptRow
from memory_core.domain.claims import (
    Claim,
    ClaimSource,
    EmbeddingIdentity,
    EmbeddingState,
    Lifecycle,
)
from memory_core.domain.errors import AgentMemoryError
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import Interval, TemporalMetadata

__all__ = ["former_claim"]


def _strict(kind: type, accepted: tuple[type, ...]) -> Callable[[Any, type], Any]:
    def structure(value: Any, _: type) -> Any:
        if isinstance(value, bool) or not isinstance(value, accepted):
            raise TypeError(f"expected {kind.__name__}")
        return kind(value) if kind is float else value

    return structure


def _converter(
    instant: Callable[[Any], datetime], entry_ids: Callable[[Any], tuple[str, ...]]
) -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(float, _strict(float, (int, float)))
    converter.register_structure_hook(int, _strict(int, (int,)))
    converter.register_structure_hook(str, _strict(str, (str,)))
    converter.register_structure_hook(datetime, lambda value, _: instant(value))
    converter.register_structure_hook_func(
        lambda cls: cls == tuple[str, ...], lambda value, _: entry_ids(value)
    )
    return converter


_CONVERTERS: dict[tuple[object, object], cattrs.Converter] = {}


def _to_claim(row: ClaimRow) -> Claim:
    try:
        embedding = None
        if row.embedding_provider and row.embedding_model and row.embedding_dim:
            embedding = EmbeddingIdentity(
                provider=row.embedding_provider, model=row.embedding_model, dim=row.embedding_dim
            )
        return Claim(
            id=row.id,
            agent_id=row.agent_id,
            kind=row.kind,  # type: ignore[arg-type]
            content=row.content,
            canonical_content=row.canonical_content,
            category=row.category,  # type: ignore[arg-type]
            importance=row.importance,
            confidence=row.confidence,
            temporal=TemporalMetadata(
                kind=row.temporal_kind,  # type: ignore[arg-type]
                interval=Interval(valid_from=row.valid_from, valid_until=row.valid_until),
                precision=row.temporal_precision,  # type: ignore[arg-type]
                timezone=row.temporal_timezone,
                confidence=row.temporal_confidence,
            ),
            scope=Scope(kind=row.scope_type, scope_id=row.scope_id),  # type: ignore[arg-type]
            provenance_key=row.provenance_key,
            source=ClaimSource(
                session_id=row.source_session,
                entry_ids=row.source_entry_ids,
                first_order_seq=row.source_first_seq,
                last_order_seq=row.source_last_seq,
                extractor=row.extractor,
            ),
            lifecycle=Lifecycle(row.lifecycle_state),
            embedding_state=EmbeddingState(row.embedding_state),
            embedding=embedding,
            revision=row.revision,
            created_at=row.created_at,
            updated_at=row.updated_at,
            last_accessed_at=row.last_accessed,
            access_count=row.access_count,
            superseded_by=row.superseded_by,
            slot=row.slot,
        )
    except (AgentMemoryError, ValueError, TypeError) as exc:
        raise CorruptRow(f"claim row {row.id} violates the domain model") from exc


def former_claim(
    values: tuple[Any, ...],
    *,
    instant: Callable[[Any], datetime],
    entry_ids: Callable[[Any], tuple[str, ...]],
) -> Claim:
    """The claim the former path read from `values`, or its CorruptRow."""
    converter = _CONVERTERS.get((instant, entry_ids))
    if converter is None:
        converter = _CONVERTERS[instant, entry_ids] = _converter(instant, entry_ids)
    mapping = dict(zip(CLAIM_COLUMNS, values, strict=True))
    try:
        row = converter.structure(mapping, ClaimRow)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        raise CorruptRow(
            f"ClaimRow {mapping.get('id', '?')} has a column of the wrong type"
        ) from exc
    return _to_claim(row)
