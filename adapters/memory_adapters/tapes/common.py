"""Argument checks every tape adapter shares: deadlines, cancellation, payloads, limits."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ValidationError

__all__ = [
    "MAX_MANIFEST_LIMIT",
    "check_cursor",
    "check_entry_ids",
    "check_limit",
    "check_session_id",
    "encode_payload",
    "enter",
    "loads_strict",
]

MAX_MANIFEST_LIMIT = 500


def enter(what: str, deadline: Deadline, cancel: CancellationToken) -> None:
    """Refuse to start work the caller has already given up on (cancellation wins)."""
    cancel.raise_if_cancelled()
    deadline.raise_if_expired(what)


def check_session_id(value: object, field: str = "session_id") -> str:
    if not isinstance(value, str) or not value:
        raise ValidationError(field, "must be a non-empty string")
    return value


def check_cursor(value: object, field: str = "after_order_seq") -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(field, "must be an integer >= 0")
    return value


def check_limit(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValidationError("limit", f"must be an integer in 1..{MAX_MANIFEST_LIMIT}")
    if not 1 <= value <= MAX_MANIFEST_LIMIT:
        raise ValidationError("limit", f"must be an integer in 1..{MAX_MANIFEST_LIMIT}")
    return value


def check_entry_ids(value: object) -> tuple[str, ...]:
    # A bare string is a Sequence too; iterating it would look up one-character ids.
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValidationError("entry_ids", "must be a sequence of message ids")
    if not all(isinstance(item, str) for item in value):
        raise ValidationError("entry_ids", "every id must be a string")
    return tuple(dict.fromkeys(value))


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> object:
    """json.loads without NaN/Infinity, which Python would otherwise accept."""
    return json.loads(text, parse_constant=_reject_constant)


def encode_payload(payload: object) -> str:
    """An anchor payload as compact JSON (tuples come back as lists); non-JSON is refused."""
    if not isinstance(payload, Mapping):
        raise ValidationError("payload", "must be a JSON object")
    if not all(isinstance(key, str) for key in payload):
        raise ValidationError("payload", "keys must be strings")
    try:
        text = json.dumps(dict(payload), allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ValidationError("payload", f"must be JSON ({type(exc).__name__})") from None
    return text
