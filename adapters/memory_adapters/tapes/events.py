"""The tape as an event log: messages, replacements, retractions and anchors.

The in-memory and JSONL tapes keep exactly this log (the JSONL file is its serialisation);
`seq` is an event's 1-based position in the log, and a session's tape head is the `seq` of
its latest message event (appends, replacements, retractions — never anchors).
"""

from __future__ import annotations

from datetime import datetime

import attrs

from memory_core.ports.tape import AnchorKind, EntryKind, EntryRole, EntryStatus

__all__ = ["AnchorEvent", "MessageEvent", "ReplacementEvent", "RetractionEvent", "TapeEvent"]


@attrs.frozen(kw_only=True)
class MessageEvent:
    seq: int
    session_id: str
    message_id: str
    order_seq: int
    role: EntryRole
    content: str
    status: EntryStatus
    kind: EntryKind
    created_at: datetime | None = None  # when the message was said (aware UTC), if known


@attrs.frozen(kw_only=True)
class ReplacementEvent:
    """New content (and optionally status) for a message; the latest one wins."""

    seq: int
    entry_id: str
    session_id: str
    message_id: str
    content: str
    status: EntryStatus | None  # None keeps the message's status


@attrs.frozen(kw_only=True)
class RetractionEvent:
    """Removes a message from the effective view; its order_seq is never reused."""

    seq: int
    entry_id: str
    session_id: str
    message_id: str


@attrs.frozen(kw_only=True)
class AnchorEvent:
    seq: int
    anchor_id: str
    anchor_kind: AnchorKind
    agent_id: str
    session_id: str
    message_id: str | None
    payload_json: str  # validated, compact JSON; decoded afresh for every reader


TapeEvent = MessageEvent | ReplacementEvent | RetractionEvent | AnchorEvent
