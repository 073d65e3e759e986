"""The fixture-file boundary: JSON → attrs values through one cattrs converter.

Fixture files (DeepChat's and ours) spell keys in camelCase; the values use snake_case
attributes and the converter renames. Types are strict — `"0.9"` is not an importance and
`1.5` is not a count — and unknown keys are refused in the behaviour and retrieval formats
(a misspelt `excludedMemoryIDs` would otherwise silently assert nothing). Every problem
becomes one `FixtureError` naming the file and the key path, e.g.
`behaviour-ours-v1.json: $.scenarios[3].rows[0].importance: must be a number`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.cols import homogenous_tuple_structure_factory
from cattrs.gen import make_dict_structure_fn, override

from memory_core.domain.errors import AgentMemoryError

__all__ = [
    "FixtureConverter",
    "FixtureError",
    "camel",
    "fixture_converter",
    "load_json",
    "structure_fixture",
]

T = TypeVar("T")
_SNAKE_SEGMENT = re.compile(r"\.([a-z0-9]+(?:_[a-z0-9]+)+)")


class FixtureError(AgentMemoryError, ValueError):
    """A fixture file that cannot be read or does not have the documented shape."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _Rejected(ValueError):
    """A primitive hook's refusal; its message is shown next to the key path."""


def _strict(kind: type) -> Any:
    def hook(value: object, _: type) -> object:
        if kind is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if not ok:
            raise _Rejected(
                f"must be {'a number' if kind is float else 'of type ' + kind.__name__}"
            )
        return kind(value)

    return hook


def _sequence_guard(converter: cattrs.Converter) -> None:
    # cattrs would accept any iterable, turning a string into a tuple of its characters.
    def is_tuple(type_: object) -> bool:
        args = get_args(type_)
        return get_origin(type_) is tuple and len(args) == 2 and args[1] is Ellipsis

    def factory(type_: Any) -> Any:
        inner = homogenous_tuple_structure_factory(type_, converter)

        def hook(value: object, target: type) -> tuple[Any, ...]:
            if not isinstance(value, list):
                raise _Rejected("must be a list")
            return inner(value, target)

        return hook

    converter.register_structure_hook_factory(is_tuple, factory)


class FixtureConverter(cattrs.Converter):
    """A cattrs converter that knows how its files spell keys (for error messages)."""

    def __init__(self, *, forbid_extra_keys: bool, camel_case: bool) -> None:
        super().__init__(forbid_extra_keys=forbid_extra_keys)
        self.camel_case = camel_case


def fixture_converter(*, forbid_extra_keys: bool, camel_case: bool = True) -> FixtureConverter:
    """A converter for fixture files: camelCase keys (DeepChat) or the attribute names
    themselves (LoCoMo); `forbid_extra_keys` for closed formats."""
    converter = FixtureConverter(forbid_extra_keys=forbid_extra_keys, camel_case=camel_case)
    for kind in (str, int, float, bool):
        converter.register_structure_hook(kind, _strict(kind))
    _sequence_guard(converter)

    def attrs_factory(cls: type) -> Any:
        renames = (
            {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
            if camel_case
            else {}
        )
        return make_dict_structure_fn(
            cls, converter, _cattrs_forbid_extra_keys=forbid_extra_keys, **renames
        )

    converter.register_structure_hook_factory(attrs.has, attrs_factory)
    return converter


def _format(exc: BaseException, type_: type | None) -> str:
    if isinstance(exc, _Rejected | AgentMemoryError):
        return str(exc)
    return cattrs.v.format_exception(exc, type_)


def load_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise FixtureError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FixtureError(f"{path}: not valid JSON ({exc})") from exc


def structure_fixture(
    data: Any, cls: type[T], *, path: Path, converter: FixtureConverter, root: str = "$"
) -> T:
    """`data` as `cls`; any problem is a FixtureError naming `path` and the key path from
    `root` (the position of `data` in the file)."""
    try:
        return converter.structure(data, cls)
    except (cattrs.ClassValidationError, cattrs.IterableValidationError) as group:
        messages = cattrs.transform_error(group, path=root, format_exception=_format)
        readable = [
            _SNAKE_SEGMENT.sub(lambda m: "." + camel(m.group(1)), message)
            if converter.camel_case
            else message
            for message in messages
        ]
        shown = "; ".join(_swap(message) for message in readable[:5])
        more = f" (and {len(readable) - 5} more)" if len(readable) > 5 else ""
        raise FixtureError(f"{path}: {shown}{more}") from group
    except (AgentMemoryError, TypeError, ValueError) as exc:
        raise FixtureError(f"{path}: {exc}") from exc


def _swap(message: str) -> str:
    # cattrs says "reason @ path"; a reader looks for the path first.
    reason, separator, where = message.partition(" @ ")
    return f"{where}: {reason}" if separator else message
