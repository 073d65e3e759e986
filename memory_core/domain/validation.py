"""The public boundary's input checks, once (R-DOM-4): every door (MemoryService, the model's
tools, the CLI, MCP later) passes what a caller sent through these before it reaches a rule.

Each check returns the value it accepted (so a call site reads `x = check_…(x, "x")`) or
raises ValidationError naming the field. A reason never echoes the value: it may be model
output or a secret pasted by mistake (errors.py).

Design choices:
- Text must be encodable as UTF-8. A lone surrogate (what Python makes of invalid UTF-8 in a
  command-line argument, or a broken JSON escape) would otherwise surface deep in a store as an
  untyped UnicodeEncodeError.
- A session id with surrounding whitespace is refused, not stripped: `" s"` and `"s"` are
  different keys to the host's tape, and stripping one of them would silently alias two
  sessions' facts (the read filter stripped, the write path did not). The scope id check
  refuses the same.
- Enums accept a member or its value and refuse anything else by name, so
  `remember(scope="session")` or `session(kind="bogus")` is a typed error, not an
  AttributeError or a bare ValueError.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import MAX_SCOPE_ID_LENGTH

__all__ = [
    "MAX_ID_LENGTH",
    "check_bool",
    "check_enum",
    "check_id",
    "check_instance",
    "check_int",
    "check_number",
    "check_session_id",
    "check_text",
]

E = TypeVar("E", bound=Enum)
T = TypeVar("T")

# Claim, directive and message ids: ours are short; a host's message id is its own.
MAX_ID_LENGTH = 256


def check_text(value: object, field: str, *, allow_blank: bool = False) -> str:
    """A string of valid Unicode (UTF-8 encodable); blank only when `allow_blank`."""
    if not isinstance(value, str):
        raise ValidationError(field, "must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(field, "is not valid Unicode text (a lone surrogate)") from None
    if not allow_blank and not value.strip():
        raise ValidationError(field, "must not be empty")
    return value


def check_id(value: object, field: str, *, max_length: int = MAX_ID_LENGTH) -> str:
    """An opaque id: non-blank text, no surrounding whitespace, at most `max_length`."""
    text = check_text(value, field)
    if text != text.strip():
        raise ValidationError(field, "must not have leading or trailing whitespace")
    if len(text) > max_length:
        raise ValidationError(field, f"longer than {max_length} characters")
    return text


def check_session_id(value: object, field: str = "session_id") -> str | None:
    """None (no session), or an id that names exactly one session (see the module note)."""
    return None if value is None else check_id(value, field, max_length=MAX_SCOPE_ID_LENGTH)


def check_int(value: object, field: str, *, minimum: int, maximum: int | None = None) -> int:
    """An int (not a bool, not a numeric string) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, "must be an integer")
    if value < minimum or (maximum is not None and value > maximum):
        upper = "" if maximum is None else str(maximum)
        raise ValidationError(field, f"must be in {minimum}..{upper}")
    return value


def check_bool(value: object, field: str) -> bool:
    """A real bool: `user_add="no"` is truthy and would release a tombstone."""
    if not isinstance(value, bool):
        raise ValidationError(field, "must be true or false")
    return value


def check_number(value: object, field: str, *, minimum: float, maximum: float) -> float:
    """A finite real number (int or float, not a bool) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(field, "must be a number")
    if not minimum <= value <= maximum:  # NaN fails both comparisons
        raise ValidationError(field, f"must be in {minimum}..{maximum}")
    return float(value)


def check_enum(value: object, enum: type[E], field: str) -> E:
    """A member of `enum`, given as the member or its value."""
    if isinstance(value, enum):
        return value
    try:
        return enum(value)
    except (ValueError, TypeError):
        names = ", ".join(str(member.value) for member in enum)
        raise ValidationError(field, f"must be one of {names}") from None


def check_instance(value: object, kind: type[T], field: str) -> T:
    """An instance of `kind` (a value object such as Scope or TemporalMetadata)."""
    if not isinstance(value, kind):
        raise ValidationError(field, f"must be a {kind.__name__}")
    return value
