"""The domain's JSON boundary: one cattrs converter for claims, directives and manifests.

Datetimes travel as ISO-8601 UTC strings (`2026-11-30T07:51:02.123000+00:00`), enums as
their values, tuples as lists. `structure` turns cattrs' exception groups into one
ValidationError that names the failing field path.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum, StrEnum
from typing import Any, TypeVar, get_args, get_origin

import cattrs
import cattrs.v
from cattrs.cols import homogenous_tuple_structure_factory, list_structure_factory
from cattrs.preconf.json import make_converter

from memory_core.domain.errors import AgentMemoryError, ValidationError
from memory_core.domain.temporal import require_utc

__all__ = ["domain_converter", "structure", "unstructure"]

T = TypeVar("T")


class _Rejected(ValueError):
    """A structure hook's refusal; its message becomes the reason next to the field path."""


def _structure_datetime(value: object, _: type) -> datetime:
    parsed = datetime.fromisoformat(value)  # type: ignore[arg-type]
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        # Not a domain error: those re-raise as they are and would lose the field path.
        raise _Rejected("must be timezone-aware")
    return parsed.astimezone(UTC)


def _structure_primitive(value: object, type_: type) -> object:
    # cattrs calls `str(value)`/`int(value)` by default, which would store None as "None" and
    # cut 1.9 to 1; a JSON boundary must refuse the wrong type instead (R-DOM-4). `type_` may
    # be a StrEnum (it dispatches here through `str`), so build the target type, not `str`.
    if issubclass(type_, bool):
        ok = isinstance(value, bool)
    elif issubclass(type_, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif issubclass(type_, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise _Rejected(f"must be of type {type_.__name__}")
    return type_(value)


def _is_homogeneous_sequence(type_: object) -> bool:
    args = get_args(type_)
    if get_origin(type_) is tuple:
        return len(args) == 2 and args[1] is Ellipsis
    return get_origin(type_) is list


def _sequence_factory(type_: type, converter: cattrs.BaseConverter):  # type: ignore[no-untyped-def]
    make = (
        homogenous_tuple_structure_factory if get_origin(type_) is tuple else list_structure_factory
    )
    inner = make(type_, converter)

    def hook(value: object, target: type) -> object:
        # Any iterable would do for cattrs: a string would become a tuple of its characters.
        if not isinstance(value, list | tuple):
            raise _Rejected("must be a list")
        return inner(value, target)

    return hook


def _format_exception(exc: BaseException, type_: type | None) -> str:
    if isinstance(exc, _Rejected):
        return str(exc)
    return cattrs.v.format_exception(exc, type_)


def _make() -> cattrs.Converter:
    converter = make_converter(forbid_extra_keys=True)
    converter.register_unstructure_hook_func(
        lambda cls: isinstance(cls, type) and issubclass(cls, Enum), lambda member: member.value
    )
    # The JSON preset passes `str` subclasses through untouched and that dispatch wins over the
    # predicate above, so StrEnum members would leak out as enum objects, not plain values.
    converter.register_unstructure_hook(StrEnum, lambda member: member.value)
    converter.register_unstructure_hook(
        datetime, lambda value: require_utc(value, "datetime").isoformat()
    )
    converter.register_structure_hook(datetime, _structure_datetime)
    for primitive in (str, int, float, bool):
        converter.register_structure_hook(primitive, _structure_primitive)
    converter.register_structure_hook_factory(_is_homogeneous_sequence, _sequence_factory)
    return converter


domain_converter = _make()


def unstructure(value: object) -> Any:
    return domain_converter.unstructure(value)


def structure(data: object, cls: type[T]) -> T:
    """Build `cls` from JSON-shaped `data`; ValidationError names the first bad field path."""
    try:
        return domain_converter.structure(data, cls)
    except ValidationError:
        raise
    except (cattrs.ClassValidationError, cattrs.IterableValidationError) as group:
        messages = cattrs.transform_error(
            group, path=cls.__name__, format_exception=_format_exception
        )
        inner = _first_domain_error(group)
        if inner is not None:
            raise inner from group
        first = messages[0] if messages else f"{cls.__name__}: invalid"
        field, _, reason = first.partition(" @ ")
        raise ValidationError(reason or cls.__name__, field) from group
    except (TypeError, ValueError, KeyError) as exc:
        raise ValidationError(cls.__name__, str(exc)) from exc


def _first_domain_error(group: BaseException) -> AgentMemoryError | None:
    if isinstance(group, AgentMemoryError):
        return group
    for exc in getattr(group, "exceptions", ()):
        found = _first_domain_error(exc)
        if found is not None:
            return found
    return None
