"""Tape ports: how memory reads the host's conversation record and writes its anchors.

The tape belongs to the host. Memory reads raw entries only through `get_by_session`,
writes only anchors, and management surfaces see only the inspection DTOs — never a raw
row or the host's tables (seed: "Tape 与 ingestion projection 边界").

Vocabulary shared by every port here:
- a *message* has a host id, a session, and an `order_seq` (≥ 1, strictly increasing within
  its session, never reused: a retracted message leaves a gap);
- the *effective* tape is the session's messages after retractions (removed) and
  replacements (latest content and status win); anchors are not messages and never appear
  in it;
- the *tape head* is an opaque token that changes whenever the effective tape may have
  changed (an append, a replacement, a retraction) and does not change when an anchor is
  appended; the *projection head* is the tape head the ingestion projection was built from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol, TypeVar, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.enums import member_of
from memory_core.domain.errors import ValidationError
from memory_core.domain.temporal import require_utc

__all__ = [
    "Anchor",
    "AnchorKind",
    "EntryKind",
    "EntryRole",
    "EntryStatus",
    "IngestionProjection",
    "ManifestRecord",
    "MessageSourceSpan",
    "ProjectionRange",
    "SourceMessage",
    "TapeAnchorWriter",
    "TapeEntry",
    "TapeInspectionReader",
    "TapeRawEntryReader",
]

E = TypeVar("E", bound=StrEnum)


class EntryRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class EntryStatus(StrEnum):
    SENT = "sent"
    ERROR = "error"  # a failed generation: never extracted, never cloned by a fork
    PENDING = "pending"  # still streaming: not settled, so ingestion waits for it


class EntryKind(StrEnum):
    MESSAGE = "message"
    COMPACTION = "compaction"  # a summary marker; never extracted, never cloned by a fork


class AnchorKind(StrEnum):
    VIEW_ASSEMBLED = "memory/view_assembled"
    DIRECTIVE_VIEW_ASSEMBLED = "memory/directive_view_assembled"
    EXTRACT = "memory/extract"


def _enum(field: str, enum: type[E]) -> Any:
    # `member_of`'s dict answers a member or its value; `enum(value)` cost ~0.6 µs for each
    # of three fields of every entry a tape reads (issue 15: ingestion reads every message).
    lookup = member_of(enum)

    def convert(value: object) -> E:
        try:
            return lookup(value)
        except ValueError:
            allowed = ", ".join(member.value for member in enum)
            raise ValidationError(field, f"must be one of {allowed}") from None

    return convert


def _non_empty(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not value:
        raise ValidationError(attribute.name, "must be a non-empty string")


def _optional_non_empty(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if value is not None:
        _non_empty(instance, attribute, value)


def _order_seq(instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValidationError(attribute.name, "must be an integer >= 1")


def _optional_utc(value: object) -> datetime | None:
    return None if value is None else require_utc(value, "created_at")  # type: ignore[arg-type]


def _text(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str):
        raise ValidationError(attribute.name, "must be a string")


@attrs.frozen(kw_only=True)
class TapeEntry:
    """One message of a session's effective tape (after retractions and replacements).

    `created_at` (aware, normalised to UTC; None when the host does not know it) is when
    the message was said. Extraction uses it as its reference time, so a conversation
    imported or replayed later is read in the frame of when it was said, not of the import
    (R-TIME-1); a replacement keeps the message's `created_at`.
    """

    id: str = attrs.field(validator=_non_empty)  # the host's message id, stable across edits
    session_id: str = attrs.field(validator=_non_empty)
    order_seq: int = attrs.field(validator=_order_seq)
    role: EntryRole = attrs.field(converter=_enum("role", EntryRole))
    content: str = attrs.field(validator=_text)
    status: EntryStatus = attrs.field(
        default=EntryStatus.SENT, converter=_enum("status", EntryStatus)
    )
    kind: EntryKind = attrs.field(default=EntryKind.MESSAGE, converter=_enum("kind", EntryKind))
    created_at: datetime | None = attrs.field(default=None, converter=_optional_utc)


@attrs.frozen(kw_only=True)
class Anchor:
    """A memory record appended to the tape. `payload` is content-free JSON (ids, counts):
    JSON objects, arrays, strings, finite numbers, booleans and null only."""

    kind: AnchorKind = attrs.field(converter=_enum("kind", AnchorKind))
    agent_id: str = attrs.field(validator=_non_empty)
    session_id: str = attrs.field(validator=_non_empty)
    message_id: str | None = attrs.field(validator=_optional_non_empty)
    payload: Mapping[str, object]


@attrs.frozen(kw_only=True)
class SourceMessage:
    """One effective message of a source span: the minimal DTO a management view shows."""

    message_id: str
    order_seq: int
    role: EntryRole
    content: str


@attrs.frozen(kw_only=True)
class MessageSourceSpan:
    """The effective messages (after edits) a claim came from, ordered by `order_seq`.

    Never empty: when none of the requested messages is effective, the reader returns None.
    """

    session_id: str
    messages: tuple[SourceMessage, ...] = attrs.field(converter=tuple)


@attrs.frozen(kw_only=True)
class ManifestRecord:
    """A stored `memory/view_assembled` anchor, as a management route may show it."""

    anchor_id: str
    session_id: str
    message_id: str | None
    payload: Mapping[str, object]


def _stale_range_is_empty(instance: ProjectionRange, attribute: object, value: object) -> None:
    if not instance.current and instance.entries:
        raise ValidationError("entries", "a range that is not current carries no entries")


@attrs.frozen(kw_only=True)
class ProjectionRange:
    """Entries after a cursor, and whether the projection agreed with the tape head.

    `current` is decided from both heads observed in one read; only a current range may
    let the ingestion cursor advance (R-WRITE-8). A range that is not current carries no
    entries: the caller rebuilds the projection or falls back to the effective tape.
    """

    current: bool
    entries: tuple[TapeEntry, ...] = attrs.field(converter=tuple, validator=_stale_range_is_empty)
    tape_head: str | None
    projection_head: str | None


@runtime_checkable
class TapeRawEntryReader(Protocol):
    """Read access to a session's effective tape. The only raw read memory performs."""

    async def get_by_session(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[TapeEntry]:
        """All effective messages of the session (compaction markers, failed and pending
        messages included; anchors never), ordered by `order_seq` ascending.

        An unknown session yields an empty sequence. Raises DeadlineExceeded /
        OperationCancelled when the deadline has passed or the token has fired.
        """
        ...


@runtime_checkable
class TapeAnchorWriter(Protocol):
    """Appends memory anchors to the host's tape."""

    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        """Persist `anchor` and return its new, unique anchor id. Not idempotent: callers
        append once. Does not change the tape head, so a current projection stays current.
        A payload that is not JSON raises ValidationError("payload")."""
        ...


@runtime_checkable
class TapeInspectionReader(Protocol):
    """DTO-only reads for management routes; no raw rows, no tables."""

    async def get_effective_message_source_span(
        self,
        session_id: str,
        entry_ids: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> MessageSourceSpan | None:
        """The effective messages of `session_id` among `entry_ids` (edits applied), or None
        when none of them is effective (all retracted, unknown, or of another session)."""
        ...

    async def list_memory_view_manifests_by_agent(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        message_id: str | None = None,
        limit: int = 50,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[ManifestRecord]:
        """`memory/view_assembled` anchors of one agent, newest first, at most `limit`
        (1..500, else ValidationError("limit")), filtered by session and message in storage."""
        ...


@runtime_checkable
class IngestionProjection(Protocol):
    """The host-side projection of the effective tape, with its consistency check.

    Hosts keep it up to date as they write messages, so a terminal turn reads only the
    range after the ingestion cursor instead of the whole history.
    """

    async def read_current_range(
        self,
        session_id: str,
        after_order_seq: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> ProjectionRange:
        """Compare the tape and projection heads and read the range in one read, so a
        concurrent append cannot produce a false "current" (R-WRITE-8).

        Current iff both heads are equal (two absent heads are equal). When current,
        `entries` are exactly the effective entries with order_seq > `after_order_seq`, in
        order — what `get_by_session` would return after the cursor. Otherwise empty.
        """
        ...

    async def rebuild_projection(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        """Rebuild the session's projection from its effective tape, atomically: the head
        recorded is the head of the tape the rows were read from, so a racing append leaves
        the projection stale rather than falsely current. Callers re-read the range after."""
        ...
