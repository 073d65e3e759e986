"""Tape ports: how memory reads the host's conversation record and writes its anchors.

The tape belongs to the host. Memory reads raw entries only through `get_by_session`,
writes only anchors, and management surfaces see only the inspection DTOs — never a raw
row or the host's tables (seed: "Tape 与 ingestion projection 边界").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline

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
    "TapeAnchorWriter",
    "TapeEntry",
    "TapeInspectionReader",
    "TapeRawEntryReader",
]


class EntryRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class EntryStatus(StrEnum):
    SENT = "sent"
    ERROR = "error"
    PENDING = "pending"


class EntryKind(StrEnum):
    MESSAGE = "message"
    COMPACTION = "compaction"  # a summary marker; never extracted as a message
    ANCHOR = "anchor"


@attrs.frozen(kw_only=True)
class TapeEntry:
    """One entry of a session's effective tape (after retractions and replacements)."""

    id: str
    session_id: str
    order_seq: int
    role: EntryRole = attrs.field(converter=EntryRole)
    content: str
    status: EntryStatus = attrs.field(default=EntryStatus.SENT, converter=EntryStatus)
    kind: EntryKind = attrs.field(default=EntryKind.MESSAGE, converter=EntryKind)


class AnchorKind(StrEnum):
    VIEW_ASSEMBLED = "memory/view_assembled"
    DIRECTIVE_VIEW_ASSEMBLED = "memory/directive_view_assembled"
    EXTRACT = "memory/extract"


@attrs.frozen(kw_only=True)
class Anchor:
    """A memory record appended to the tape. `payload` is content-free JSON (ids, counts)."""

    kind: AnchorKind = attrs.field(converter=AnchorKind)
    agent_id: str
    session_id: str
    message_id: str | None
    payload: Mapping[str, object]


@attrs.frozen(kw_only=True)
class MessageSourceSpan:
    """The minimal effective message a claim came from, for management views."""

    session_id: str
    message_id: str
    order_seq: int
    role: EntryRole
    content: str


@attrs.frozen(kw_only=True)
class ManifestRecord:
    anchor_id: str
    session_id: str
    message_id: str | None
    payload: Mapping[str, object]


@attrs.frozen(kw_only=True)
class ProjectionRange:
    """Entries after a cursor, and whether the projection agreed with the tape head.

    `current` is decided from both heads observed in one read; only a current range may
    let the ingestion cursor advance (R-WRITE-8).
    """

    current: bool
    entries: Sequence[TapeEntry]
    tape_head: str | None
    projection_head: str | None


@runtime_checkable
class TapeRawEntryReader(Protocol):
    """Read access to a session's effective tape. The only raw read memory performs."""

    async def get_by_session(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[TapeEntry]:
        """All effective entries of the session, ordered by `order_seq` ascending.

        An unknown session yields an empty sequence. Raises DeadlineExceeded /
        OperationCancelled when the deadline passes or the token fires.
        """
        ...


@runtime_checkable
class TapeAnchorWriter(Protocol):
    """Appends memory anchors to the host's tape."""

    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        """Persist `anchor` and return its entry id. Not idempotent: callers append once."""
        ...


@runtime_checkable
class TapeInspectionReader(Protocol):
    """DTO-only reads for management routes; no raw rows, no tables."""

    async def get_effective_message_source_span(
        self, session_id: str, entry_ids: Sequence[str], *, deadline: Deadline,
        cancel: CancellationToken,
    ) -> MessageSourceSpan | None:
        """The effective message covering `entry_ids` (after edits), or None if retracted."""
        ...

    async def list_memory_view_manifests_by_agent(
        self, agent_id: str, *, session_id: str | None = None, message_id: str | None = None,
        limit: int = 50, deadline: Deadline, cancel: CancellationToken,
    ) -> Sequence[ManifestRecord]:
        """`memory/view_assembled` anchors of one agent, newest first, filtered in storage."""
        ...


@runtime_checkable
class IngestionProjection(Protocol):
    """The host-side projection of extractable messages, with its consistency check."""

    async def read_current_range(
        self, session_id: str, after_order_seq: int, *, deadline: Deadline,
        cancel: CancellationToken,
    ) -> ProjectionRange:
        """Entries with order_seq > `after_order_seq`, comparing tape and projection heads
        in one read so a concurrent append cannot produce a false "current"."""
        ...
