"""Closed enums read cheaply: every stored row and draft names its kind, lifecycle and
embedding state, and `Enum.__call__` is a slow path for what is nearly always an exact
value or a member."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

__all__ = ["member_of"]

E = TypeVar("E", bound=StrEnum)


def member_of(enum: type[E]) -> Callable[[object], E]:
    """A converter equal to `enum(value)`: a member or its value is answered from a dict;
    anything else takes the enum's own call, its aliases (`_missing_`) and its error."""
    members: dict[object, E] = {member.value: member for member in enum}

    def convert(value: object) -> E:
        try:
            return members[value]
        except (KeyError, TypeError):  # not a value, or unhashable
            return enum(value)  # type: ignore[arg-type]

    return convert
