"""The four tape ports and the host's write methods over an in-process `TapeState`.

`InMemoryTape` uses it as is; `JsonlTape` adds two hooks: `_refresh` (take in lines another
process appended) before every call, and `_persist` (append and fsync) before a write is
applied, so state never runs ahead of the file. One lock makes every call a single step:
a reader never sees the tape head and the projection head of different moments.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime

from memory_adapters.tapes.common import (
    check_cursor,
    check_entry_ids,
    check_limit,
    check_session_id,
    enter,
)
from memory_adapters.tapes.events import MessageEvent, TapeEvent
from memory_adapters.tapes.state import TapeState
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.tape import (
    Anchor,
    EntryKind,
    EntryRole,
    EntryStatus,
    ManifestRecord,
    MessageSourceSpan,
    ProjectionRange,
    TapeEntry,
)

__all__ = ["EventTape"]


class EventTape:
    """Implements TapeRawEntryReader, TapeAnchorWriter, TapeInspectionReader and
    IngestionProjection, plus the writes a host, demo or test performs."""

    def __init__(self) -> None:
        self._state = TapeState()
        self._lock = threading.RLock()

    # --- hooks ---------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Bring the state up to date with the storage (nothing to do in memory)."""

    def _persist(self, events: Sequence[TapeEvent]) -> None:
        """Make `events` durable before they are applied (nothing to do in memory)."""

    def _write(self, events: Sequence[TapeEvent], *, project: bool = True) -> None:
        self._persist(events)
        for event in events:
            self._state.apply(event, project=project)

    # --- host writes ---------------------------------------------------------------------
    def append_message(
        self,
        session_id: str,
        role: EntryRole | str,
        content: str,
        *,
        status: EntryStatus | str = EntryStatus.SENT,
        kind: EntryKind | str = EntryKind.MESSAGE,
        message_id: str | None = None,
        created_at: datetime | None = None,
        project: bool = True,
    ) -> TapeEntry:
        """Append a message with the next order_seq of its session and return it.

        `message_id` defaults to a fresh id; a host's own id must be unique on this tape.
        `created_at` (aware) is when the message was said, if the host knows it.
        `project=False` models a writer that does not maintain the ingestion projection (an
        older host, a bulk import): the projection goes stale until rebuilt.
        """
        with self._lock:
            self._refresh()
            event = self._state.plan_message(
                session_id,
                role,
                content,
                status=status,
                kind=kind,
                message_id=message_id,
                created_at=created_at,
            )
            self._write([event], project=project)
            return _entry(event)

    def replace(
        self,
        session_id: str,
        message_id: str,
        content: str,
        *,
        status: EntryStatus | str | None = None,
        project: bool = True,
    ) -> TapeEntry:
        """Edit an effective message in place (same id and order_seq); returns it as now seen.
        NotFound if it is retracted, unknown, or of another session."""
        with self._lock:
            self._refresh()
            event = self._state.plan_replacement(session_id, message_id, content, status)
            self._write([event], project=project)
            return next(
                entry for entry in self._state.effective(session_id) if entry.id == message_id
            )

    def retract(self, session_id: str, message_id: str, *, project: bool = True) -> None:
        """Remove a message from the effective view; its order_seq is not reused."""
        with self._lock:
            self._refresh()
            self._write([self._state.plan_retraction(session_id, message_id)], project=project)

    def fork(
        self, source_session_id: str, target_session_id: str, up_to_order_seq: int
    ) -> tuple[TapeEntry, ...]:
        """Clone the source's sent messages up to `up_to_order_seq` into the empty target,
        renumbered 1..n (failed messages and compaction markers stay behind; R-WRITE-3)."""
        with self._lock:
            self._refresh()
            events = self._state.plan_fork(source_session_id, target_session_id, up_to_order_seq)
            self._write(events)
            return tuple(_entry(event) for event in events)

    # --- TapeRawEntryReader --------------------------------------------------------------
    async def get_by_session(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[TapeEntry]:
        enter("tape.get_by_session", deadline, cancel)
        check_session_id(session_id)
        with self._lock:
            self._refresh()
            return self._state.effective(session_id)

    # --- TapeAnchorWriter ----------------------------------------------------------------
    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        enter("tape.append", deadline, cancel)
        with self._lock:
            self._refresh()
            event = self._state.plan_anchor(anchor)
            self._write([event])
            return event.anchor_id

    # --- TapeInspectionReader ------------------------------------------------------------
    async def get_effective_message_source_span(
        self,
        session_id: str,
        entry_ids: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> MessageSourceSpan | None:
        enter("tape.get_effective_message_source_span", deadline, cancel)
        check_session_id(session_id)
        ids = check_entry_ids(entry_ids)
        with self._lock:
            self._refresh()
            return self._state.span(session_id, ids)

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
        enter("tape.list_memory_view_manifests_by_agent", deadline, cancel)
        check_session_id(agent_id, "agent_id")
        checked_limit = check_limit(limit)
        with self._lock:
            self._refresh()
            return self._state.manifests(agent_id, session_id, message_id, checked_limit)

    # --- IngestionProjection -------------------------------------------------------------
    async def read_current_range(
        self,
        session_id: str,
        after_order_seq: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> ProjectionRange:
        enter("tape.read_current_range", deadline, cancel)
        check_session_id(session_id)
        check_cursor(after_order_seq)
        with self._lock:
            self._refresh()
            return self._state.read_range(session_id, after_order_seq)

    async def rebuild_projection(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        enter("tape.rebuild_projection", deadline, cancel)
        check_session_id(session_id)
        with self._lock:
            self._refresh()
            self._state.rebuild(session_id)


def _entry(event: MessageEvent) -> TapeEntry:
    return TapeEntry(
        id=event.message_id,
        session_id=event.session_id,
        order_seq=event.order_seq,
        role=event.role,
        content=event.content,
        status=event.status,
        kind=event.kind,
        created_at=event.created_at,
    )
