"""How one dialect reads stored rows (CONVENTIONS: one converter per boundary, here one per
dialect): strictly, and cheaply enough for every candidate of every turn.

A row class's annotations are its column types (rows.py): a `str` column holds text, an
`int` one a whole number and never a bool, a `float` one any number (drivers hand back
REAL columns holding whole numbers as int), `X | None` also NULL, and the dialect reads
instants and the source entry list itself (`instant`, `entry_ids`, each raising
TypeError/ValueError on a value of the wrong type). Whether a row's values have the
accepted types depends only on their types, so it is judged once per distinct tuple of
types (a row's *shape*, a handful per store), which also fixes the few columns that need
converting; a row of a known shape is only converted. A row that breaks a column rule is
a CorruptRow, skipped by list reads (R-TIME-4).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import attrs

from memory_adapters.sql_claims.rows import (
    CLAIM_COLUMNS,
    DIRECTIVE_COLUMNS,
    ClaimRow,
    CorruptRow,
    DirectiveRow,
    claim_of,
)
from memory_core.domain.claims import Claim

__all__ = ["RowReader"]

_NONE = type(None)
# Distinct shapes judged and kept per row class; beyond, a new shape is judged every time.
_SHAPES = 256

Convert = Callable[[Any], Any]
Plan = tuple[tuple[int, Convert], ...]  # (column position, conversion) of one shape


def _is_text(kind: type) -> bool:
    return issubclass(kind, str)


def _is_whole(kind: type) -> bool:
    return issubclass(kind, int) and not issubclass(kind, bool)


def _is_number(kind: type) -> bool:
    return issubclass(kind, int | float) and not issubclass(kind, bool)


def _any(kind: type) -> bool:
    return True  # the column's conversion checks the value itself


@attrs.frozen
class _Column:
    name: str
    optional: bool
    accepts: Callable[[type], bool]
    convert: Convert | None
    # A value already of this type needs no conversion (float columns: float stays float).
    converted: type | None = None

    def read(self, value: Any) -> Any:
        kind = type(value)
        if kind is _NONE and self.optional:
            return None
        if not self.accepts(kind):
            raise TypeError(f"column {self.name} holds the wrong type")
        if self.convert is None or kind is self.converted:
            return value
        return self.convert(value)


def _column(name: str, hint: Any, instant: Convert, entry_ids: Convert) -> _Column:
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = [arg for arg in typing.get_args(hint) if arg is not _NONE]
        optional = True
    if hint is str:
        return _Column(name, optional, _is_text, None)
    if hint is int:
        return _Column(name, optional, _is_whole, None)
    if hint is float:
        return _Column(name, optional, _is_number, float, float)
    if hint is datetime:
        return _Column(name, optional, _any, instant)
    if typing.get_origin(hint) is tuple:
        return _Column(name, optional, _any, entry_ids)
    raise TypeError(f"no column rule for {name}: {hint!r}")


class _Table:
    """One row class's column rules and the conversion plan of each shape seen."""

    def __init__(self, cls: type, instant: Convert, entry_ids: Convert) -> None:
        hints = typing.get_type_hints(cls)
        names = [field.name for field in attrs.fields(cls)]
        self._label = cls.__name__
        self._columns = tuple(_column(name, hints[name], instant, entry_ids) for name in names)
        self._by_name = {column.name: column for column in self._columns}
        self._id_at = names.index("id")
        self._plans: dict[tuple[type, ...], Plan] = {}

    def read(self, values: Sequence[Any]) -> Sequence[Any]:
        """`values` checked and converted to the columns' domain types."""
        shape = tuple(map(type, values))
        plan = self._plans.get(shape)
        if plan is None:
            plan = self._plan(shape, values)
        if not plan:
            return values
        read = list(values)
        at = -1
        try:
            for at, convert in plan:
                read[at] = convert(read[at])
        except (TypeError, ValueError, OverflowError) as exc:
            # OverflowError: an epoch value past the calendar's range.
            raise self._corrupt(values, self._columns[at].name) from exc
        return read

    def column(self, name: str, value: Any) -> Any:
        """One column's value read alone (raises TypeError/ValueError/OverflowError)."""
        return self._by_name[name].read(value)

    def _plan(self, shape: tuple[type, ...], values: Sequence[Any]) -> Plan:
        if len(shape) != len(self._columns):
            # The statement's column list, not the data, is wrong: not a corrupt row.
            raise ValueError(
                f"{self._label} read with {len(shape)} of {len(self._columns)} columns"
            )
        plan: list[tuple[int, Convert]] = []
        for at, (kind, column) in enumerate(zip(shape, self._columns, strict=True)):
            if kind is _NONE and column.optional:
                continue
            if not column.accepts(kind):
                raise self._corrupt(values, column.name)
            if column.convert is not None and kind is not column.converted:
                plan.append((at, column.convert))
        kept = tuple(plan)
        if len(self._plans) < _SHAPES:
            self._plans[shape] = kept
        return kept

    def _corrupt(self, values: Sequence[Any], column: str) -> CorruptRow:
        return CorruptRow(f"{self._label} {values[self._id_at]} has a wrong value in {column}")


class RowReader:
    """One dialect's reading of claim and directive rows and of bare instants."""

    def __init__(self, *, instant: Callable[[Any], datetime], entry_ids: Convert) -> None:
        self.instant = instant
        self.entry_ids = entry_ids
        self._claims = _Table(ClaimRow, instant, entry_ids)
        self._directives = _Table(DirectiveRow, instant, entry_ids)

    def claim(self, values: Sequence[Any]) -> Claim:
        """The claim of a SELECT of CLAIM_COLUMNS; CorruptRow when it breaks a rule."""
        return claim_of(self._claims.read(values))

    def claim_row(self, values: Sequence[Any]) -> ClaimRow:
        return ClaimRow(**dict(zip(CLAIM_COLUMNS, self._claims.read(values), strict=True)))

    def claim_column(self, name: str, value: Any) -> Any:
        """One claim column read alone, as `claim` reads it (raises TypeError/ValueError)."""
        return self._claims.column(name, value)

    def directive_row(self, values: Sequence[Any]) -> DirectiveRow:
        read = self._directives.read(values)
        return DirectiveRow(**dict(zip(DIRECTIVE_COLUMNS, read, strict=True)))
