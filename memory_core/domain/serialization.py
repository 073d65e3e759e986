"""The domain's JSON boundary: one cattrs converter for claims, directives and manifests.

Datetimes travel as ISO-8601 UTC strings (`2026-11-30T07:51:02.123000+00:00`), enums as
their values, tuples as lists. `structure` turns cattrs' exception groups into one
ValidationError that names the failing field path.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, TypeVar

import cattrs
from cattrs.preconf.json import make_converter

from memory_core.domain.errors import AgentMemoryError, ValidationError
from memory_core.domain.temporal import require_utc

__all__ = ["domain_converter", "structure", "unstructure"]

T = TypeVar("T")


def _make() -> cattrs.Converter:
    converter = make_converter(forbid_extra_keys=True)
    converter.register_unstructure_hook_func(
        lambda cls: isinstance(cls, type) and issubclass(cls, Enum), lambda member: member.value
    )
    converter.register_unstructure_hook(datetime, lambda value: require_utc(value, "datetime").isoformat())
    converter.register_structure_hook(
        datetime, lambda value, _: require_utc(datetime.fromisoformat(value), "datetime")
    )
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
        messages = cattrs.transform_error(group, path=cls.__name__)
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
