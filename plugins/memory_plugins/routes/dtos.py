"""The management routes' DTOs: flat, normalised values a UI or an HTTP layer can send as
JSON — ids, texts the user owns, enums as strings, instants as ISO-8601 UTC. No provider
identity beyond its id, no key, no URL (R-PROV-5); no raw tape rows. One cattrs converter
for this boundary (`route_converter`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs
import cattrs

from memory_core.domain.claims import Claim
from memory_core.domain.directives import Directive
from memory_core.ports.tape import ManifestRecord, MessageSourceSpan
from memory_core.services.maintenance import AuditEvent, Conflict, PersonaVersion, PersonaView

__all__ = [
    "AuditDTO",
    "ClaimDTO",
    "ClaimPage",
    "ConflictDTO",
    "DirectiveDTO",
    "ManifestDTO",
    "PersonaDTO",
    "PersonaVersionDTO",
    "SourceMessageDTO",
    "SourceSpanDTO",
    "route_converter",
]


@attrs.frozen(kw_only=True)
class ClaimDTO:
    id: str
    kind: str
    content: str
    category: str | None
    importance: float
    confidence: float | None
    scope: str  # "agent", "user:u1", "project:p1", "session:s1"
    lifecycle: str
    superseded_by: str | None
    source_session: str | None
    revision: int  # what an edit names as `expected_revision`
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, claim: Claim) -> ClaimDTO:
        return cls(
            id=claim.id,
            kind=claim.kind.value,
            content=claim.content,
            category=None if claim.category is None else claim.category.value,
            importance=claim.importance,
            confidence=claim.confidence,
            scope=str(claim.scope),
            lifecycle=claim.lifecycle.value,
            superseded_by=claim.superseded_by,
            source_session=claim.source.session_id,
            revision=claim.revision,
            created_at=claim.created_at,
            updated_at=claim.updated_at,
        )


@attrs.frozen(kw_only=True)
class ClaimPage:
    items: tuple[ClaimDTO, ...]
    next_after: str | None  # pass as `after` for the next page; None on the last one


@attrs.frozen(kw_only=True)
class ConflictDTO:
    challenger: ClaimDTO
    target: ClaimDTO

    @classmethod
    def of(cls, conflict: Conflict) -> ConflictDTO:
        return cls(challenger=ClaimDTO.of(conflict.challenger), target=ClaimDTO.of(conflict.target))


@attrs.frozen(kw_only=True)
class PersonaVersionDTO:
    id: str
    content: str
    state: str
    created_at: datetime

    @classmethod
    def of(cls, version: PersonaVersion | None) -> PersonaVersionDTO | None:
        if version is None:
            return None
        return cls(
            id=version.id,
            content=version.content,
            state=version.state.value,
            created_at=version.created_at,
        )


@attrs.frozen(kw_only=True)
class PersonaDTO:
    active: PersonaVersionDTO | None
    draft: PersonaVersionDTO | None
    change_ratio: float | None
    needs_review: bool

    @classmethod
    def of(cls, view: PersonaView) -> PersonaDTO:
        return cls(
            active=PersonaVersionDTO.of(view.active),
            draft=PersonaVersionDTO.of(view.draft),
            change_ratio=view.change_ratio,
            needs_review=view.needs_review,
        )


@attrs.frozen(kw_only=True)
class DirectiveDTO:
    id: str
    kind: str
    status: str
    content: str
    topic: str | None
    updated_at: datetime

    @classmethod
    def of(cls, directive: Directive) -> DirectiveDTO:
        return cls(
            id=directive.id,
            kind=directive.kind.value,
            status=directive.status.value,
            content=directive.content,
            topic=directive.topic,
            updated_at=directive.updated_at,
        )


@attrs.frozen(kw_only=True)
class AuditDTO:
    event: str
    actor: str
    status: str
    claim_id: str | None
    refs: Mapping[str, int | str | bool | None]
    created_at: datetime

    @classmethod
    def of(cls, event: AuditEvent) -> AuditDTO:
        return cls(
            event=event.event,
            actor=event.actor,
            status=event.status,
            claim_id=event.memory_id,
            refs=dict(event.refs),
            created_at=event.created_at,
        )


@attrs.frozen(kw_only=True)
class ManifestDTO:
    anchor_id: str
    session_id: str
    message_id: str | None
    manifest: Mapping[str, Any]

    @classmethod
    def of(cls, record: ManifestRecord) -> ManifestDTO:
        return cls(
            anchor_id=record.anchor_id,
            session_id=record.session_id,
            message_id=record.message_id,
            manifest=dict(record.payload),
        )


@attrs.frozen(kw_only=True)
class SourceMessageDTO:
    message_id: str
    order_seq: int
    role: str
    content: str


@attrs.frozen(kw_only=True)
class SourceSpanDTO:
    claim_id: str
    session_id: str
    messages: tuple[SourceMessageDTO, ...]

    @classmethod
    def of(cls, claim_id: str, span: MessageSourceSpan) -> SourceSpanDTO:
        return cls(
            claim_id=claim_id,
            session_id=span.session_id,
            messages=tuple(
                SourceMessageDTO(
                    message_id=m.message_id,
                    order_seq=m.order_seq,
                    role=str(m.role),
                    content=m.content,
                )
                for m in span.messages
            ),
        )


def _converter() -> cattrs.Converter:
    converter = cattrs.Converter()
    converter.register_unstructure_hook(datetime, lambda value: value.isoformat())
    return converter


route_converter = _converter()
