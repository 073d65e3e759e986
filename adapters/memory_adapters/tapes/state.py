"""A tape held in process: the event log's effective view, its projection and its anchors.

Shared by the in-memory and JSONL tapes. `plan_*` validate a write and return the event
without changing anything (so the JSONL tape can persist it first); `check` validates an
event read back from a file; `apply` changes the state. Callers serialise access.

The projection is a second copy of the effective view plus the tape head it was built
from. An applied event updates it in step only when it was current before the event and
the writer maintains it (`project=True`); otherwise it stays stale until `rebuild`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

import attrs

from memory_adapters.tapes.common import check_session_id, encode_payload
from memory_adapters.tapes.events import (
    AnchorEvent,
    MessageEvent,
    ReplacementEvent,
    RetractionEvent,
    TapeEvent,
)
from memory_core.domain.errors import NotFound, ValidationError
from memory_core.ports.tape import (
    Anchor,
    AnchorKind,
    EntryKind,
    EntryRole,
    EntryStatus,
    ManifestRecord,
    MessageSourceSpan,
    ProjectionRange,
    SourceMessage,
    TapeEntry,
)
from memory_core.services.write.fork_cursor import fork_selection

__all__ = ["TapeState", "head_token"]


def head_token(seq: int | None) -> str | None:
    """Heads travel as opaque strings through the port."""
    return None if seq is None else str(seq)


@attrs.define
class _Message:
    id: str
    order_seq: int
    role: EntryRole
    content: str
    status: EntryStatus
    kind: EntryKind
    created_at: datetime | None = None
    retracted: bool = False

    def entry(self, session_id: str) -> TapeEntry:
        return TapeEntry(
            id=self.id,
            session_id=session_id,
            order_seq=self.order_seq,
            role=self.role,
            content=self.content,
            status=self.status,
            kind=self.kind,
            created_at=self.created_at,
        )


@attrs.define
class _Session:
    messages: dict[str, _Message] = attrs.Factory(dict)  # in order_seq order
    last_order_seq: int = 0  # retracted messages included: order_seq is never reused
    head: int | None = None
    projection: dict[str, TapeEntry] = attrs.Factory(dict)
    projection_head: int | None = None


def _status(value: object) -> EntryStatus:
    try:
        return EntryStatus(value)
    except ValueError:
        raise ValidationError("status", "must be one of sent, error, pending") from None


class TapeState:
    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._ids: set[str] = set()  # message, replacement, retraction and anchor ids
        self._anchors: dict[str, list[AnchorEvent]] = {}  # agent -> anchors, oldest first
        self.last_seq = 0

    # --- reads ---------------------------------------------------------------------------
    def effective(self, session_id: str) -> tuple[TapeEntry, ...]:
        session = self._sessions.get(session_id)
        if session is None:
            return ()
        return tuple(
            message.entry(session_id)
            for message in session.messages.values()
            if not message.retracted
        )

    def read_range(self, session_id: str, after_order_seq: int) -> ProjectionRange:
        session = self._sessions.get(session_id) or _Session()
        current = session.head == session.projection_head
        entries: list[TapeEntry] = []
        if current:
            entries = [e for e in session.projection.values() if e.order_seq > after_order_seq]
            entries.sort(key=lambda entry: entry.order_seq)
        return ProjectionRange(
            current=current,
            entries=tuple(entries),
            tape_head=head_token(session.head),
            projection_head=head_token(session.projection_head),
        )

    def span(self, session_id: str, entry_ids: Iterable[str]) -> MessageSourceSpan | None:
        session = self._sessions.get(session_id)
        if session is None:
            return None
        found = [
            session.messages[entry_id]
            for entry_id in entry_ids
            if entry_id in session.messages and not session.messages[entry_id].retracted
        ]
        if not found:
            return None
        found.sort(key=lambda message: message.order_seq)
        return MessageSourceSpan(
            session_id=session_id,
            messages=tuple(
                SourceMessage(
                    message_id=message.id,
                    order_seq=message.order_seq,
                    role=message.role,
                    content=message.content,
                )
                for message in found
            ),
        )

    def manifests(
        self, agent_id: str, session_id: str | None, message_id: str | None, limit: int
    ) -> tuple[ManifestRecord, ...]:
        records: list[ManifestRecord] = []
        for anchor in reversed(self._anchors.get(agent_id, ())):
            if len(records) == limit:
                break
            if anchor.anchor_kind is not AnchorKind.VIEW_ASSEMBLED:
                continue
            if session_id is not None and anchor.session_id != session_id:
                continue
            if message_id is not None and anchor.message_id != message_id:
                continue
            records.append(
                ManifestRecord(
                    anchor_id=anchor.anchor_id,
                    session_id=anchor.session_id,
                    message_id=anchor.message_id,
                    payload=json.loads(anchor.payload_json),
                )
            )
        return tuple(records)

    # --- planning writes -----------------------------------------------------------------
    def plan_message(
        self,
        session_id: str,
        role: EntryRole | str,
        content: str,
        *,
        status: EntryStatus | str = EntryStatus.SENT,
        kind: EntryKind | str = EntryKind.MESSAGE,
        message_id: str | None = None,
        created_at: datetime | None = None,
    ) -> MessageEvent:
        check_session_id(session_id)
        if message_id is not None and message_id in self._ids:
            raise ValidationError("message_id", "is already used on this tape")
        seq = self.last_seq + 1
        order_seq = self._last_order_seq(session_id) + 1
        # TapeEntry validates role, content, status and kind and names the bad field.
        entry = TapeEntry(
            id=message_id if message_id is not None else self._fresh_id("m", seq),
            session_id=session_id,
            order_seq=order_seq,
            role=role,
            content=content,
            status=status,
            kind=kind,
            created_at=created_at,
        )
        event = MessageEvent(
            seq=seq,
            session_id=session_id,
            message_id=entry.id,
            order_seq=order_seq,
            role=entry.role,
            content=entry.content,
            status=entry.status,
            kind=entry.kind,
            created_at=entry.created_at,
        )
        self.check(event)
        return event

    def plan_replacement(
        self,
        session_id: str,
        message_id: str,
        content: str,
        status: EntryStatus | str | None = None,
    ) -> ReplacementEvent:
        if not isinstance(content, str):
            raise ValidationError("content", "must be a string")
        current = self._live_message(session_id, message_id)
        seq = self.last_seq + 1
        resolved = current.status if status is None else _status(status)
        event = ReplacementEvent(
            seq=seq,
            entry_id=self._fresh_id("r", seq),
            session_id=session_id,
            message_id=message_id,
            content=content,
            status=resolved,
        )
        self.check(event)
        return event

    def plan_retraction(self, session_id: str, message_id: str) -> RetractionEvent:
        self._live_message(session_id, message_id)
        seq = self.last_seq + 1
        event = RetractionEvent(
            seq=seq,
            entry_id=self._fresh_id("x", seq),
            session_id=session_id,
            message_id=message_id,
        )
        self.check(event)
        return event

    def plan_anchor(self, anchor: Anchor) -> AnchorEvent:
        if not isinstance(anchor, Anchor):
            raise ValidationError("anchor", "must be an Anchor")
        seq = self.last_seq + 1
        event = AnchorEvent(
            seq=seq,
            anchor_id=self._fresh_id("a", seq),
            anchor_kind=anchor.kind,
            agent_id=anchor.agent_id,
            session_id=anchor.session_id,
            message_id=anchor.message_id,
            payload_json=encode_payload(anchor.payload),
        )
        self.check(event)
        return event

    def plan_fork(
        self, source_session_id: str, target_session_id: str, up_to_order_seq: int
    ) -> tuple[MessageEvent, ...]:
        """The target's messages: the fork selection of the source, renumbered 1..n."""
        check_session_id(source_session_id, "source_session_id")
        check_session_id(target_session_id, "target_session_id")
        if source_session_id == target_session_id:
            raise ValidationError("target_session_id", "must differ from the source session")
        if self._last_order_seq(target_session_id):
            raise ValidationError("target_session_id", "already has messages")
        selected = fork_selection(self.effective(source_session_id), up_to_order_seq)
        events: list[MessageEvent] = []
        for position, source in enumerate(selected, start=1):
            seq = self.last_seq + position
            events.append(
                MessageEvent(
                    seq=seq,
                    session_id=target_session_id,
                    message_id=self._fresh_id("m", seq),
                    order_seq=position,
                    role=source.role,
                    content=source.content,
                    status=source.status,
                    kind=source.kind,
                    created_at=source.created_at,
                )
            )
        return tuple(events)

    # --- validating and applying ---------------------------------------------------------
    def check(self, event: TapeEvent) -> None:
        """Raise ValidationError / NotFound if `event` cannot follow the current state."""
        if event.seq != self.last_seq + 1:
            raise ValidationError("seq", "events must be applied in order")
        check_session_id(event.session_id)
        match event:
            case MessageEvent():
                self._check_new_id(event.message_id, "id")
                if event.order_seq <= self._last_order_seq(event.session_id):
                    raise ValidationError("order_seq", "must increase within the session")
            case ReplacementEvent() | RetractionEvent():
                self._check_new_id(event.entry_id, "id")
                self._live_message(event.session_id, event.message_id)
            case AnchorEvent():
                self._check_new_id(event.anchor_id, "id")

    def apply(self, event: TapeEvent, *, project: bool = True) -> None:
        self.last_seq = event.seq
        if isinstance(event, AnchorEvent):
            self._ids.add(event.anchor_id)
            self._anchors.setdefault(event.agent_id, []).append(event)
            return  # anchors never move the tape head
        session = self._sessions.setdefault(event.session_id, _Session())
        in_step = project and session.head == session.projection_head
        match event:
            case MessageEvent():
                self._ids.add(event.message_id)
                message = _Message(
                    id=event.message_id,
                    order_seq=event.order_seq,
                    role=event.role,
                    content=event.content,
                    status=event.status,
                    kind=event.kind,
                    created_at=event.created_at,
                )
                session.messages[message.id] = message
                session.last_order_seq = event.order_seq
            case ReplacementEvent():
                self._ids.add(event.entry_id)
                message = session.messages[event.message_id]
                message.content = event.content
                message.status = event.status or message.status
            case RetractionEvent():
                self._ids.add(event.entry_id)
                message = session.messages[event.message_id]
                message.retracted = True
        session.head = event.seq
        if in_step:
            if message.retracted:
                session.projection.pop(message.id, None)
            else:
                session.projection[message.id] = message.entry(event.session_id)
            session.projection_head = event.seq

    def rebuild(self, session_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            return
        session.projection = {entry.id: entry for entry in self.effective(session_id)}
        session.projection_head = session.head

    # --- helpers -------------------------------------------------------------------------
    def _last_order_seq(self, session_id: str) -> int:
        session = self._sessions.get(session_id)
        return 0 if session is None else session.last_order_seq

    def _live_message(self, session_id: str, message_id: str) -> _Message:
        check_session_id(session_id)
        session = self._sessions.get(session_id)
        message = None if session is None else session.messages.get(message_id)
        if message is None or message.retracted:
            raise NotFound(f"no effective message {message_id!r} in session {session_id!r}")
        return message

    def _check_new_id(self, value: str, field: str) -> None:
        if not isinstance(value, str) or not value:
            raise ValidationError(field, "must be a non-empty string")
        if value in self._ids:
            raise ValidationError(field, "is already used on this tape")

    def _fresh_id(self, prefix: str, seq: int) -> str:
        candidate, suffix = f"{prefix}-{seq}", 1
        while candidate in self._ids:  # a host chose this spelling for one of its own ids
            candidate, suffix = f"{prefix}-{seq}.{suffix}", suffix + 1
        return candidate
