"""The extractor port: turns a bounded span of conversation into candidate claims.

An extractor is untrusted-input processing: everything in the request's entries is data,
never instructions. It proposes; the ingestion service decides (provenance, tombstones,
slot supersession, conflicts) and stores. Directive suggestions can only ever become
drafts (R-DIR-1). Reasons for dropping a candidate are closed codes, never content.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Category, ClaimKind
from memory_core.domain.directives import (
    MAX_DIRECTIVE_CONTENT,
    MAX_TOPIC_LENGTH,
    DirectiveKind,
    clean_directive_text,
    is_topic_specific,
)
from memory_core.domain.errors import ValidationError
from memory_core.domain.temporal import (
    ATEMPORAL,
    TemporalMetadata,
    canonical_timezone,
    require_utc,
)
from memory_core.ports.tape import TapeEntry

__all__ = [
    "MAX_SLOT_LENGTH",
    "SLOT_PATTERN",
    "BlockingExtractor",
    "CandidateClaim",
    "DirectiveSuggestion",
    "ExtractionRequest",
    "ExtractionResult",
    "Extractor",
    "RejectionReason",
    "is_valid_slot",
]

MAX_SLOT_LENGTH = 128
# A slot names a single-valued fact (`user.home_city`, `user.trip.lisbon`): a namespace and at
# least one key, lowercase ASCII, so two spellings of one slot cannot coexist.
SLOT_PATTERN = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9][a-z0-9_]*)+")


def is_valid_slot(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= MAX_SLOT_LENGTH
        and SLOT_PATTERN.fullmatch(value) is not None
    )


class RejectionReason(StrEnum):
    """Why an extractor dropped one candidate or suggestion; counted, never explained with
    content (the audit and the `memory/extract` anchor carry these codes only)."""

    INVALID_CANDIDATE = "invalid-candidate"  # not an object, content not text, bad field type
    EMPTY_CONTENT = "empty-content"
    CANDIDATE_TOO_LARGE = "candidate-too-large"  # rejected, never truncated
    INVALID_TEMPORAL = "invalid-temporal"  # strict temporal rules failed (R-TIME-4)
    INVALID_SLOT = "invalid-slot"
    SECRET = "secret"  # the secret policy refused it (R-PRIV-1)
    OVER_LIMIT = "over-limit"  # more candidates than one extraction may keep
    EXTRA_TASK_OUTCOME = "extra-task-outcome"  # at most one task outcome per extraction
    INVALID_SUGGESTION = "invalid-suggestion"
    SUGGESTION_OVER_LIMIT = "suggestion-over-limit"
    SUGGESTION_SECRET = "suggestion-secret"


@attrs.frozen(kw_only=True)
class ExtractionRequest:
    """What an extractor sees: untrusted entries plus the domain clock's frame of reference.

    Relative dates ("tomorrow", "last year") resolve against `reference_time` in `timezone`,
    never against the wall clock. `reference_time` is when the entries were said (the last
    known `TapeEntry.created_at`, never after now), else the domain clock's now.
    """

    agent_id: str
    session_id: str
    entries: tuple[TapeEntry, ...] = attrs.field(converter=tuple)
    reference_time: datetime = attrs.field(converter=lambda v: require_utc(v, "reference_time"))
    timezone: str = attrs.field(converter=lambda v: canonical_timezone(v, "timezone"))


def _non_blank(_: object, __: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("content", "must be non-blank text")


def _unit(field: str):  # type: ignore[no-untyped-def]
    def check(_: object, __: attrs.Attribute[float], value: object) -> None:
        if value is None:
            return
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0.0 <= value <= 1.0
        ):
            raise ValidationError(field, "must be a number in [0, 1]")

    return check


def _slot(_: object, __: attrs.Attribute[str | None], value: object) -> None:
    if value is not None and not is_valid_slot(value):
        raise ValidationError("slot", "must be a lowercase dotted key such as user.home_city")


@attrs.frozen(kw_only=True)
class CandidateClaim:
    """A proposed claim. `confidence` is fact evidence, independent of the temporal
    confidence inside `temporal` (R-DOM-2). `slot` marks a single-valued fact: a newer
    candidate with the same slot is what lets the decision step supersede an older claim.
    Length limits are the extractor's to enforce (settings), so they are not checked here."""

    content: str = attrs.field(validator=_non_blank)
    kind: ClaimKind = ClaimKind.SEMANTIC
    category: Category | None = None
    importance: float = attrs.field(default=0.5, validator=_unit("importance"))
    confidence: float | None = attrs.field(default=None, validator=_unit("confidence"))
    temporal: TemporalMetadata = ATEMPORAL
    slot: str | None = attrs.field(default=None, validator=_slot)
    source_entry_ids: tuple[str, ...] = attrs.field(default=(), converter=tuple)


def _suggestion_kind(value: object) -> DirectiveKind:
    try:
        return DirectiveKind(value)
    except ValueError as exc:
        raise ValidationError("kind", "not a known DirectiveKind") from exc


@attrs.frozen(kw_only=True)
class DirectiveSuggestion:
    """A model- or rule-derived directive; it can only ever become a draft (R-DIR-1).

    Content and topic are cleaned of invisible characters and bounded; a `suppress_topic`
    suggestion needs a specific topic (R-DIR-2), an `instruction` has none.
    """

    kind: DirectiveKind = attrs.field(converter=_suggestion_kind)
    content: str = attrs.field(
        converter=lambda v: clean_directive_text(v, field="content", limit=MAX_DIRECTIVE_CONTENT)
    )
    topic: str | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(
            lambda v: clean_directive_text(v, field="topic", limit=MAX_TOPIC_LENGTH)
        ),
    )

    def __attrs_post_init__(self) -> None:
        if self.kind is DirectiveKind.SUPPRESS_TOPIC:
            if self.topic is None:
                raise ValidationError("topic", "required for suppress_topic")
            if not is_topic_specific(self.topic):
                raise ValidationError("topic", "not specific enough to suppress on")
        elif self.topic is not None:
            raise ValidationError("topic", "only suppress_topic suggestions have a topic")


@attrs.frozen(kw_only=True)
class ExtractionResult:
    """Valid candidates, suggestions, and one reason code per candidate or suggestion dropped."""

    candidates: tuple[CandidateClaim, ...] = attrs.field(default=(), converter=tuple)
    suggestions: tuple[DirectiveSuggestion, ...] = attrs.field(default=(), converter=tuple)
    rejected: tuple[RejectionReason, ...] = attrs.field(
        default=(), converter=lambda values: tuple(RejectionReason(v) for v in values)
    )


@runtime_checkable
class Extractor(Protocol):
    """Proposes claims and directive suggestions from one bounded span of the tape."""

    @property
    def name(self) -> str:
        """Recorded as the claim source's extractor (`ClaimSource.extractor`)."""
        ...

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        """Candidates from the request's entries, each naming its source entry ids.

        User statements are the only source of user facts (assistant text never is).
        Candidates and suggestions have passed the secret policy (R-PRIV-1). One malformed
        candidate is counted in `rejected` and never fails the batch (R-TIME-4); a wholly
        unusable response raises ProviderResponseError so the ingestion cursor does not
        advance. Honours `deadline` (DeadlineExceeded) and `cancel` (OperationCancelled).
        """
        ...


@runtime_checkable
class BlockingExtractor(Extractor, Protocol):
    """An extractor whose work is all computation (rules, no I/O): `extract_blocking` is
    the same extraction as `extract`, as a plain call, so the ingestion runtime can run it
    off the event loop (the `BlockingCalls` port) while the loop keeps answering turns and
    the embedding model's threads have the loop's core back (issue 15)."""

    def extract_blocking(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        """What `extract` returns for `request`, computed on the calling thread. It may run
        on any thread, one call at a time; it checks `deadline` and `cancel` as it goes."""
        ...
