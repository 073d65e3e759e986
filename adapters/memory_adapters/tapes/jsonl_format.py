"""The JSONL tape's line format: one JSON object per line, parsed strictly (docs/tape-format.md).

    {"id":"m-1","session":"s1","order_seq":1,"role":"user","content":"…","status":"sent","kind":"message",
     "created_at":"2025-05-01T09:30:00+00:00"}
    {"id":"r-4","session":"s1","kind":"replacement","message_id":"m-1","content":"…","status":"sent"}
    {"id":"x-5","session":"s1","kind":"retraction","message_id":"m-1"}
    {"id":"a-6","session":"s1","kind":"anchor","anchor_kind":"memory/view_assembled",
     "agent_id":"agent-1","message_id":"m-1","payload":{…}}

`kind` tells the line types apart and defaults to "message"; a message's `status`
defaults to "sent", a replacement's to the message's current status. A message's optional
`created_at` (ISO-8601 with an offset, stored as UTC; absent when unknown) is when it was
said. Ids (`id`, `session`, `message_id`) are strings; an integer is accepted and kept as
its decimal string, since hosts keyed by integers are common. Unknown keys, wrong types and
unknown values are errors that name the field.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

import attrs

from memory_adapters.tapes.common import loads_strict
from memory_adapters.tapes.events import (
    AnchorEvent,
    MessageEvent,
    ReplacementEvent,
    RetractionEvent,
    TapeEvent,
)
from memory_core.domain.errors import StoreError, ValidationError
from memory_core.domain.serialization import structure
from memory_core.domain.temporal import require_utc
from memory_core.ports.tape import AnchorKind, EntryKind, EntryRole, EntryStatus

__all__ = ["TapeFormatError", "format_event", "parse_line"]

_MESSAGE_KINDS = tuple(kind.value for kind in EntryKind)
_LINE_KINDS = (*_MESSAGE_KINDS, "replacement", "retraction", "anchor")
_ID_FIELDS = ("id", "session", "message_id")


class TapeFormatError(StoreError):
    """A complete line of a JSONL tape is malformed; `line` is its 1-based number."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"{source} line {line}: {reason}")


@attrs.frozen(kw_only=True)
class _MessageLine:
    id: str
    session: str
    order_seq: int
    role: EntryRole
    content: str
    status: EntryStatus = EntryStatus.SENT
    kind: EntryKind = EntryKind.MESSAGE
    created_at: datetime | None = None


@attrs.frozen(kw_only=True)
class _ReplacementLine:
    id: str
    session: str
    kind: Literal["replacement"]
    message_id: str
    content: str
    status: EntryStatus | None = None


@attrs.frozen(kw_only=True)
class _RetractionLine:
    id: str
    session: str
    kind: Literal["retraction"]
    message_id: str


@attrs.frozen(kw_only=True)
class _AnchorLine:
    id: str
    session: str
    kind: Literal["anchor"]
    anchor_kind: AnchorKind
    agent_id: str
    message_id: str | None = None
    payload: dict[str, Any] = attrs.field(factory=dict)


def parse_line(text: str, seq: int) -> TapeEvent:
    """The event on one line. Raises ValidationError naming the field (JSON errors too)."""
    try:
        raw = loads_strict(text)
    except ValueError as exc:  # JSONDecodeError and NaN/Infinity alike
        raise ValidationError("line", f"not a JSON value ({exc})") from None
    if not isinstance(raw, dict):
        raise ValidationError("line", "must be a JSON object")
    raw = _decimal_ids(raw)
    kind = raw.get("kind", EntryKind.MESSAGE.value)
    if kind not in _LINE_KINDS:
        raise ValidationError("kind", f"must be one of {', '.join(_LINE_KINDS)}")
    if kind in _MESSAGE_KINDS:
        message = structure(raw, _MessageLine)
        return MessageEvent(
            seq=seq,
            session_id=message.session,
            message_id=message.id,
            order_seq=_positive(message.order_seq),
            role=message.role,
            content=message.content,
            status=message.status,
            kind=message.kind,
            created_at=None
            if message.created_at is None
            else require_utc(message.created_at, "created_at"),
        )
    if kind == "replacement":
        replacement = structure(raw, _ReplacementLine)
        return ReplacementEvent(
            seq=seq,
            entry_id=replacement.id,
            session_id=replacement.session,
            message_id=replacement.message_id,
            content=replacement.content,
            status=replacement.status,
        )
    if kind == "retraction":
        retraction = structure(raw, _RetractionLine)
        return RetractionEvent(
            seq=seq,
            entry_id=retraction.id,
            session_id=retraction.session,
            message_id=retraction.message_id,
        )
    anchor = structure(raw, _AnchorLine)
    return AnchorEvent(
        seq=seq,
        anchor_id=anchor.id,
        anchor_kind=anchor.anchor_kind,
        agent_id=anchor.agent_id,
        session_id=anchor.session,
        message_id=anchor.message_id,
        payload_json=json.dumps(anchor.payload, ensure_ascii=False, separators=(",", ":")),
    )


def format_event(event: TapeEvent) -> bytes:
    """One line, newline included, in the field order of the module docstring."""
    line: dict[str, object]
    match event:
        case MessageEvent():
            line = {
                "id": event.message_id,
                "session": event.session_id,
                "order_seq": event.order_seq,
                "role": event.role.value,
                "content": event.content,
                "status": event.status.value,
                "kind": event.kind.value,
            }
            if event.created_at is not None:
                line["created_at"] = event.created_at.isoformat()
        case ReplacementEvent():
            line = {
                "id": event.entry_id,
                "session": event.session_id,
                "kind": "replacement",
                "message_id": event.message_id,
                "content": event.content,
            }
            if event.status is not None:
                line["status"] = event.status.value
        case RetractionEvent():
            line = {
                "id": event.entry_id,
                "session": event.session_id,
                "kind": "retraction",
                "message_id": event.message_id,
            }
        case AnchorEvent():
            line = {
                "id": event.anchor_id,
                "session": event.session_id,
                "kind": "anchor",
                "anchor_kind": event.anchor_kind.value,
                "agent_id": event.agent_id,
                "message_id": event.message_id,
                "payload": json.loads(event.payload_json),
            }
    text = json.dumps(line, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return (text + "\n").encode("utf-8")


def _decimal_ids(raw: dict[str, Any]) -> dict[str, Any]:
    """Integer ids as their decimal strings (`7` -> `"7"`, so a replacement naming message 7
    finds it); `true` stays a type error, not the id "True"."""
    return {
        key: str(value)
        if key in _ID_FIELDS and isinstance(value, int) and not isinstance(value, bool)
        else value
        for key, value in raw.items()
    }


def _positive(order_seq: int) -> int:
    if order_seq < 1:
        raise ValidationError("order_seq", "must be >= 1")
    return order_seq
