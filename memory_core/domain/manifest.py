"""The selection manifest: what one turn's contribution selected, dropped and why (R-READ-5).

A manifest is diagnostics that outlive the turn (it is persisted as the `memory/view_assembled`
anchor), so it is content-free by construction: ids, kinds, scores, token counts, reasons and
hashes — never claim, directive or query text (R-FORGET-1 "no plaintext in diagnostics"). No
field here can hold free text; `query_hash` is the provenance-style hash of the query.
"""

from __future__ import annotations

import json
import math
from enum import StrEnum
from typing import Any

import attrs

from memory_core.domain.claims import ClaimKind
from memory_core.domain.directives import DirectiveKind, DirectiveSource
from memory_core.domain.errors import ValidationError
from memory_core.domain.serialization import structure, unstructure
from memory_core.domain.temporal_policy import TemporalStatus

__all__ = [
    "MANIFEST_POLICY_VERSION",
    "CandidateSource",
    "Degradation",
    "DirectiveManifest",
    "DropReason",
    "DroppedItem",
    "ScoreBreakdown",
    "SelectedDirective",
    "SelectedItem",
    "SelectionManifest",
    "StageTimings",
]

MANIFEST_POLICY_VERSION = 1


class Degradation(StrEnum):
    """Why a turn's recall ran on less than the full path (values as DeepChat reports them)."""

    VECTOR_COLD = "vectorCold"
    EMBEDDING_TIMEOUT = "embeddingTimeout"
    EMBEDDING_ERROR = "embeddingError"
    EMBEDDING_CIRCUIT_OPEN = "embeddingCircuitOpen"
    STORE_UNUSABLE = "storeUnusable"
    STORE_TIMEOUT = "storeTimeout"
    STORE_ERROR = "storeError"
    REVISION_CHANGED = "revisionChanged"
    FTS_UNAVAILABLE = "ftsUnavailable"
    CANDIDATE_BUDGET_EXHAUSTED = "candidateBudgetExhausted"
    UNKNOWN = "unknown"


class DropReason(StrEnum):
    """Why a candidate memory or directive did not enter the contribution."""

    BUDGET = "budget"  # a memory line did not fit its lane
    ITEM_BUDGET = "item_budget"  # one directive above the per-directive ceiling (R-DIR-3)
    TOTAL_BUDGET = "total_budget"  # a directive that would overflow the directive ceiling
    SUPPRESSED = "suppressed"  # matched an active suppress_topic directive (R-DIR-2)
    DUPLICATE = "duplicate"  # a near-duplicate of a better-scored memory (R-READ-8)
    TEMPORAL = "temporal"  # ineligible now under the current-mode temporal policy (R-TIME-3)


class CandidateSource(StrEnum):
    """Which retrieval list a candidate came from."""

    FTS = "fts"
    VECTOR = "vector"


def _finite(instance: object, attribute: attrs.Attribute, value: object) -> None:
    # NaN or infinity would make the manifest non-JSON (allow_nan=False) and sorting undefined.
    # A finite float (nearly every value: a turn builds a dozen breakdowns) is answered by
    # one subtraction: x - x is 0.0 exactly when x is finite (inf - inf and NaN give NaN).
    if value is None or (value.__class__ is float and value - value == 0.0):
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError(attribute.name, "must be a finite number")


def _non_negative(instance: object, attribute: attrs.Attribute, value: object) -> None:
    _finite(instance, attribute, value)
    if value is not None and value < 0:  # type: ignore[operator]
        raise ValidationError(attribute.name, "must not be negative")


def _kind_value(value: object) -> str:
    # Dropped items are claims or directives; both kinds are closed enums, stored as values.
    if isinstance(value, StrEnum):
        return value.value
    if not isinstance(value, str) or value not in _KNOWN_KINDS:
        raise ValidationError("kind", "not a known claim or directive kind")
    return value


_KNOWN_KINDS = frozenset(kind.value for kind in (*ClaimKind, *DirectiveKind))


def _degradations(values: object) -> tuple[Degradation, ...]:
    # A set in enum order: the same degradations always serialise the same way.
    try:
        found = {Degradation(value) for value in values}  # type: ignore[attr-defined]
    except (TypeError, ValueError) as exc:
        raise ValidationError("degradations", "not a list of known degradations") from exc
    return tuple(member for member in Degradation if member in found)


def _sources(values: object) -> tuple[CandidateSource, ...]:
    try:
        return tuple(CandidateSource(value) for value in values)  # type: ignore[attr-defined]
    except (TypeError, ValueError) as exc:
        raise ValidationError("sources", "not a list of known sources") from exc


@attrs.frozen(kw_only=True)
class ScoreBreakdown:
    """Every term of one memory's score (scoring.py), so a ranking can be explained and tuned."""

    similarity: float = attrs.field(validator=_finite)
    recency: float = attrs.field(validator=_finite)
    importance: float = attrs.field(validator=_finite)
    confidence: float = attrs.field(validator=_finite)
    access: float = attrs.field(validator=_finite)
    base: float = attrs.field(validator=_finite)
    confidence_factor: float = attrs.field(validator=_finite)
    rrf: float = attrs.field(validator=_finite)
    score: float = attrs.field(validator=_finite)  # max(base·confidence_factor, floor)
    temporal_factor: float = attrs.field(validator=_finite)
    temporal_status: TemporalStatus
    final: float = attrs.field(validator=_finite)  # score · temporal_factor
    combined: float = attrs.field(validator=_finite)  # (score + rrf) · temporal_factor


@attrs.frozen(kw_only=True)
class SelectedItem:
    """A recalled memory that entered the `## Relevant Memories` section."""

    id: str
    kind: ClaimKind = attrs.field(converter=ClaimKind)
    score: float | None = attrs.field(default=None, validator=_finite)
    sources: tuple[CandidateSource, ...] = attrs.field(default=(), converter=_sources)
    similarity: float | None = attrs.field(default=None, validator=_finite)
    tokens: int = attrs.field(default=0, validator=_non_negative)
    breakdown: ScoreBreakdown | None = None


@attrs.frozen(kw_only=True)
class DroppedItem:
    """A memory or directive left out, with the reason. `kind` is the claim/directive kind value."""

    id: str
    kind: str = attrs.field(converter=_kind_value)
    reason: DropReason = attrs.field(converter=DropReason)


@attrs.frozen(kw_only=True)
class SelectedDirective:
    id: str
    kind: DirectiveKind = attrs.field(converter=DirectiveKind)
    source: DirectiveSource = attrs.field(converter=DirectiveSource)
    tokens: int = attrs.field(default=0, validator=_non_negative)


@attrs.frozen(kw_only=True)
class DirectiveManifest:
    """The directive block's own accounting (R-DIR-3): dropped ids are always recorded."""

    selected: tuple[SelectedDirective, ...] = ()
    dropped: tuple[DroppedItem, ...] = ()
    token_budget: int = attrs.field(default=0, validator=_non_negative)  # min(total, ceiling)
    item_token_budget: int = attrs.field(default=0, validator=_non_negative)
    estimated_tokens: int = attrs.field(default=0, validator=_non_negative)


@attrs.frozen(kw_only=True)
class StageTimings:
    """Per-stage latency of one retrieval, in milliseconds (measured by the caller's InfraClock)."""

    keywords: float = attrs.field(default=0.0, validator=_non_negative)
    query_embedding: float = attrs.field(default=0.0, validator=_non_negative)
    vector: float = attrs.field(default=0.0, validator=_non_negative)
    revalidation: float = attrs.field(default=0.0, validator=_non_negative)
    assembly: float = attrs.field(default=0.0, validator=_non_negative)
    total: float = attrs.field(default=0.0, validator=_non_negative)


@attrs.frozen(kw_only=True)
class SelectionManifest:
    """One turn's selection record. `allocation` is the allocator's manifest plus usage."""

    policy_version: int = MANIFEST_POLICY_VERSION
    selected: tuple[SelectedItem, ...] = ()
    dropped: tuple[DroppedItem, ...] = ()
    token_budget: int = attrs.field(default=0, validator=_non_negative)
    estimated_tokens: int = attrs.field(default=0, validator=_non_negative)
    allocation: dict[str, Any] = attrs.field(factory=dict)
    query_hash: str | None = None
    degradations: tuple[Degradation, ...] = attrs.field(default=(), converter=_degradations)
    directives: DirectiveManifest = attrs.field(factory=DirectiveManifest)
    timings: StageTimings | None = None

    @property
    def is_empty(self) -> bool:
        """Nothing worth persisting: no selection, drop, degradation or constrained allocation."""
        return not (
            self.selected
            or self.dropped
            or self.degradations
            or self.directives.selected
            or self.directives.dropped
            or self.allocation.get("constrained", False)
        )

    def to_json(self) -> str:
        """Compact JSON through the domain converter; never NaN, never non-JSON values."""
        return json.dumps(
            unstructure(self), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )

    @classmethod
    def from_json(cls, text: str) -> SelectionManifest:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError("manifest", "not valid JSON") from exc
        return structure(data, cls)
