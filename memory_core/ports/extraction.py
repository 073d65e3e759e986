"""The extractor port: turns a bounded span of conversation into candidate claims."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Category, ClaimKind
from memory_core.domain.temporal import ATEMPORAL, TemporalMetadata
from memory_core.ports.tape import TapeEntry

__all__ = [
    "CandidateClaim",
    "DirectiveSuggestion",
    "ExtractionRequest",
    "ExtractionResult",
    "Extractor",
]


@attrs.frozen(kw_only=True)
class ExtractionRequest:
    """What an extractor sees: untrusted entries plus the domain clock's frame of reference."""

    agent_id: str
    session_id: str
    entries: tuple[TapeEntry, ...] = attrs.field(converter=tuple)
    reference_time: datetime
    timezone: str


@attrs.frozen(kw_only=True)
class CandidateClaim:
    content: str
    kind: ClaimKind = ClaimKind.SEMANTIC
    category: Category | None = None
    importance: float = 0.5
    confidence: float | None = None
    temporal: TemporalMetadata = ATEMPORAL
    slot: str | None = None
    source_entry_ids: tuple[str, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen(kw_only=True)
class DirectiveSuggestion:
    """A model- or rule-derived directive; it can only ever become a draft (R-DIR-1)."""

    kind: str
    content: str
    topic: str | None = None


@attrs.frozen(kw_only=True)
class ExtractionResult:
    """Valid candidates, suggestions, and how many candidates were rejected (and why)."""

    candidates: tuple[CandidateClaim, ...] = attrs.field(default=(), converter=tuple)
    suggestions: tuple[DirectiveSuggestion, ...] = attrs.field(default=(), converter=tuple)
    rejected: Sequence[str] = ()


@runtime_checkable
class Extractor(Protocol):
    @property
    def name(self) -> str:
        ...

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        """Candidates from the request's entries. One malformed candidate is counted in
        `rejected` and never fails the batch (R-TIME-4); a wholly unusable response raises
        ProviderResponseError so the ingestion cursor does not advance."""
        ...
