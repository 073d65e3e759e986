"""Claims: the atomic remembered facts, the only authority (R-DOM-1).

Lifecycle, embedding state, temporal metadata and scope are separate typed fields — never
one overloaded status (R-DOM-1). Factual `confidence` and temporal confidence are
independent (R-DOM-2).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum

import attrs

from memory_core.domain.enums import E, member_of
from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import Scope, validate_agent_id
from memory_core.domain.temporal import ATEMPORAL, TemporalKind, TemporalMetadata, require_utc

__all__ = [
    "CATEGORY_IMPORTANCE_FLOORS",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_IMPORTANCE",
    "MAX_EXTRACTED_CONTENT_CODE_POINTS",
    "MAX_MANUAL_CONTENT_CODE_POINTS",
    "Category",
    "Claim",
    "ClaimDraft",
    "ClaimKind",
    "ClaimSource",
    "EmbeddingIdentity",
    "EmbeddingState",
    "Lifecycle",
    "WriteOrigin",
    "kind_for_category",
]

MAX_EXTRACTED_CONTENT_CODE_POINTS = 2_000
MAX_MANUAL_CONTENT_CODE_POINTS = 12_000
DEFAULT_IMPORTANCE = 0.5
DEFAULT_CONFIDENCE = 0.7


class ClaimKind(StrEnum):
    """Kinds keep their own semantics and dedup rules; persona/working are internal rows."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PERSONA = "persona"
    REFLECTION = "reflection"

    @property
    def is_internal(self) -> bool:
        """Internal rows: never recalled, embedded, tombstoned, archived or generically deleted."""
        return self in (ClaimKind.PERSONA, ClaimKind.WORKING)


class Category(StrEnum):
    USER_PREFERENCE = "user_preference"
    PROJECT_FACT = "project_fact"
    TASK_OUTCOME = "task_outcome"
    HEURISTIC = "heuristic"
    ANTI_PATTERN = "anti_pattern"


# importance = max(stated, floor): a category says how much a fact of that sort matters.
CATEGORY_IMPORTANCE_FLOORS: dict[Category, float] = {
    Category.USER_PREFERENCE: 0.5,
    Category.PROJECT_FACT: 0.6,
    Category.TASK_OUTCOME: 0.55,
    Category.HEURISTIC: 0.5,
    Category.ANTI_PATTERN: 0.6,
}


def kind_for_category(
    category: Category | None, default: ClaimKind = ClaimKind.SEMANTIC
) -> ClaimKind:
    """A task outcome is episodic; every other category is semantic; none keeps the default."""
    if category is None:
        return default
    return ClaimKind.EPISODIC if category is Category.TASK_OUTCOME else ClaimKind.SEMANTIC


class Lifecycle(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"  # recoverable: `memory_forget` and user archive
    CONFLICTED = "conflicted"  # an unresolved challenger


class EmbeddingState(StrEnum):
    PENDING = "pending"
    READY = "ready"
    ERROR = "error"
    FTS_ONLY = "fts_only"  # no embedder configured
    NOT_APPLICABLE = "not_applicable"  # internal rows


class WriteOrigin(StrEnum):
    """Who asked for a write; decides whether a tombstone may be released (R-WRITE-5)."""

    EXTRACTION = "extraction"
    MODEL_TOOL = "model_tool"  # memory_remember: never releases a tombstone
    USER_ADD = "user_add"  # explicit user re-authorisation: releases it atomically
    IMPORT = "import"


@attrs.frozen(kw_only=True)
class EmbeddingIdentity:
    """Which vector space an embedding lives in (R-PROV-4)."""

    provider: str
    model: str
    dim: int = attrs.field(validator=attrs.validators.gt(0))

    @property
    def fingerprint(self) -> str:
        """Storage fingerprint `provider:model`, recorded on each embedded claim."""
        return f"{self.provider}:{self.model}"


@attrs.frozen(kw_only=True)
class ClaimSource:
    """Where a claim came from: the session, the tape entries, the extractor."""

    session_id: str | None = None
    entry_ids: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    first_order_seq: int | None = None
    last_order_seq: int | None = None
    extractor: str | None = None


def _closed_enum(enum: type[E], field: str) -> Callable[[object], E]:
    # A bare ValueError would neither be typed nor name the field (R-DOM-4), and would echo
    # the value, which may come from model output.
    convert_member = member_of(enum)

    def convert(value: object) -> E:
        try:
            return convert_member(value)
        except ValueError as exc:
            raise ValidationError(field, f"not a known {enum.__name__}") from exc

    return convert


def _unit_interval(field: str):  # type: ignore[no-untyped-def]
    def check(instance: object, attribute: attrs.Attribute, value: object) -> None:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or math.isnan(value)
            or not 0.0 <= value <= 1.0
        ):
            raise ValidationError(field, "must be a number in [0, 1]")

    return check


def _check_content(limit: int):  # type: ignore[no-untyped-def]
    def check(instance: object, attribute: attrs.Attribute, value: object) -> None:
        if not isinstance(value, str) or not value.strip():
            raise ValidationError("content", "must be non-blank text")
        if len(value) > limit:
            raise ValidationError("content", f"longer than {limit} code points")

    return check


def _check_internal_shape(kind: ClaimKind, scope: Scope, temporal: TemporalMetadata) -> None:
    if kind.is_internal:
        if not scope.is_agent:
            raise ValidationError("scope", f"{kind.value} rows live in agent scope only")
        if not temporal.is_atemporal:
            raise ValidationError("temporal", f"{kind.value} rows are atemporal")


@attrs.frozen(kw_only=True)
class ClaimDraft:
    """A claim asked to be stored; the store assigns id, provenance, revision and times."""

    agent_id: str = attrs.field(validator=lambda _i, _a, v: validate_agent_id(v))
    kind: ClaimKind = attrs.field(converter=_closed_enum(ClaimKind, "kind"))
    content: str = attrs.field(validator=_check_content(MAX_MANUAL_CONTENT_CODE_POINTS))
    category: Category | None = attrs.field(
        default=None, converter=attrs.converters.optional(_closed_enum(Category, "category"))
    )
    importance: float = attrs.field(
        default=DEFAULT_IMPORTANCE, validator=_unit_interval("importance")
    )
    confidence: float | None = attrs.field(
        default=None, validator=attrs.validators.optional(_unit_interval("confidence"))
    )
    temporal: TemporalMetadata = ATEMPORAL
    scope: Scope = attrs.field(factory=Scope.agent)
    source: ClaimSource = attrs.field(factory=ClaimSource)
    slot: str | None = None  # single-valued key such as `user.home_city`

    def __attrs_post_init__(self) -> None:
        _check_internal_shape(self.kind, self.scope, self.temporal)

    @property
    def effective_importance(self) -> float:
        floor = CATEGORY_IMPORTANCE_FLOORS.get(self.category, 0.0) if self.category else 0.0
        return max(self.importance, floor)


@attrs.frozen(kw_only=True)
class Claim:
    """A stored claim as read back from the authoritative store."""

    id: str
    agent_id: str
    kind: ClaimKind = attrs.field(converter=member_of(ClaimKind))
    content: str
    canonical_content: str
    category: Category | None = attrs.field(
        default=None, converter=attrs.converters.optional(member_of(Category))
    )
    importance: float = DEFAULT_IMPORTANCE
    confidence: float | None = None
    temporal: TemporalMetadata = ATEMPORAL
    scope: Scope = attrs.field(factory=Scope.agent)
    provenance_key: str | None = None
    source: ClaimSource = attrs.field(factory=ClaimSource)
    lifecycle: Lifecycle = attrs.field(default=Lifecycle.ACTIVE, converter=member_of(Lifecycle))
    embedding_state: EmbeddingState = attrs.field(
        default=EmbeddingState.PENDING, converter=member_of(EmbeddingState)
    )
    embedding: EmbeddingIdentity | None = None
    revision: int = 1
    created_at: datetime = attrs.field(converter=lambda v: require_utc(v, "created_at"))
    updated_at: datetime = attrs.field(converter=lambda v: require_utc(v, "updated_at"))
    last_accessed_at: datetime | None = None
    access_count: int = 0
    superseded_by: str | None = None
    slot: str | None = None

    @property
    def effective_confidence(self) -> float:
        """Factual confidence; unknown counts as the neutral default 0.7."""
        return DEFAULT_CONFIDENCE if self.confidence is None else self.confidence

    @property
    def is_recallable(self) -> bool:
        """Active, not superseded, not internal: the rows recall may return."""
        return (
            self.lifecycle is Lifecycle.ACTIVE
            and self.superseded_by is None
            and not self.kind.is_internal
        )

    def is_ready_in(self, identity: EmbeddingIdentity) -> bool:
        """Its vector is the one `identity`'s namespace holds: embedded, in that identity
        (what re-validation asks of a vector hit, R-READ-3)."""
        return self.embedding_state is EmbeddingState.READY and self.embedding == identity

    @property
    def temporal_kind(self) -> TemporalKind:
        return self.temporal.kind
