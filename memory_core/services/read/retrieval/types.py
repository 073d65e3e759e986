"""The retrieval service's vocabulary: purposes, requests, results and diagnostics."""

from __future__ import annotations

from enum import StrEnum

import attrs

from memory_core.domain.directives import Directive
from memory_core.domain.errors import ValidationError
from memory_core.domain.manifest import Degradation, DroppedItem, StageTimings
from memory_core.domain.scope import ScopeContext, ScopeFilter, validate_agent_id
from memory_core.domain.temporal_policy import TemporalMode
from memory_core.services.read.scoring import ScoredItem

__all__ = [
    "RetrievalDiagnostics",
    "RetrievalOutcome",
    "RetrievalPurpose",
    "RetrievalRequest",
    "RetrievalResult",
]


class RetrievalPurpose(StrEnum):
    RECALL = "recall"  # memory_recall tool: current mode, suppression, access accounting
    INJECTION = "injection"  # prompt contribution: current mode, suppression, no accounting here
    DECISION = "decision"  # write-path neighbours: evidence mode, no suppression
    SEARCH = "search"  # management search: evidence mode, AND semantics

    @property
    def mode(self) -> TemporalMode:
        if self in (RetrievalPurpose.RECALL, RetrievalPurpose.INJECTION):
            return TemporalMode.CURRENT
        return TemporalMode.EVIDENCE

    @property
    def suppresses(self) -> bool:
        return self.mode is TemporalMode.CURRENT


class RetrievalOutcome(StrEnum):
    COMPLETED = "completed"
    EMPTY_QUERY = "emptyQuery"
    FENCED = "fenced"  # a clear job is pending for the agent
    CANCELLED = "cancelled"
    FAILED = "failed"


@attrs.frozen(kw_only=True)
class RetrievalRequest:
    agent_id: str = attrs.field(validator=lambda _i, _a, v: validate_agent_id(v))
    query: str
    purpose: RetrievalPurpose = attrs.field(
        default=RetrievalPurpose.RECALL, converter=RetrievalPurpose
    )
    context: ScopeContext | None = None
    scope_filter: ScopeFilter | None = None  # overrides `context` (decision: one exact scope)
    top_k: int | None = None
    # Ranked items past top-K to hand back as replacements: the turn drops the recalled
    # memories working memory already shows and refills the recall lane from these.
    reserve: int = 0
    # The agent's active directives, when the caller has just read them for this call (the
    # turn reads them anyway): suppression uses these instead of reading them again.
    directives: tuple[Directive, ...] | None = None
    # Whether a clear fences the agent (`fenced_by_clear`), read by the caller in the same
    # hop as `directives`: with both given, retrieval makes no store hop of its own for them.
    fenced: bool | None = None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.query, str):
            raise ValidationError("query", "must be text")
        if self.top_k is not None and not 1 <= self.top_k <= 100:
            raise ValidationError("top_k", "must be in 1..100")
        if isinstance(self.reserve, bool) or not isinstance(self.reserve, int):
            raise ValidationError("reserve", "must be an integer")
        if not 0 <= self.reserve <= 100:
            raise ValidationError("reserve", "must be in 0..100")


@attrs.frozen(kw_only=True)
class RetrievalDiagnostics:
    """Content-free: timings, counts, outcome and degradations of one call."""

    purpose: RetrievalPurpose
    outcome: RetrievalOutcome
    timings: StageTimings
    fts_candidates: int = 0
    vector_candidates: int = 0
    revalidated: int = 0
    suppressed: int = 0
    refills: int = 0
    degradations: tuple[Degradation, ...] = ()


@attrs.frozen(kw_only=True)
class RetrievalResult:
    items: tuple[ScoredItem, ...]
    dropped: tuple[DroppedItem, ...]
    degradations: tuple[Degradation, ...]
    query_hash: str
    diagnostics: RetrievalDiagnostics
    reserve: tuple[ScoredItem, ...] = ()  # the next-ranked items, best first (request.reserve)
