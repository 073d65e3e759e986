"""Which rules a clause can open: the rule table indexed by each pattern's first character.

Most clauses of a conversation match no rule ("That was fun!", "Wow, how long did it
take?"), and each one was tried against every pattern of the table: 62 `fullmatch` calls a
clause, a fifth of a conversation's extraction (issue 15). A pattern can only match a text
that starts with a character its regex can start with, so each pattern's opening characters
are read from its parsed form once, on first use, and a clause is tried only against the
rules that can open with its first character — in table order, so the first rule that
answers still wins.

The reading is conservative: anything it does not take apart (a character category such
as `\\w`, a back-reference, an inline flag, a parser this Python does not have) leaves
the pattern tried for every clause. Case-insensitive patterns are indexed by both cases of
ASCII characters only, and a clause opening with a non-ASCII character is tried against
every rule: case-insensitive Unicode matching pairs ASCII letters with others (K and the
Kelvin sign, s and the long s), which this index does not reproduce.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["OpeningIndex", "openings"]

T = TypeVar("T")

try:  # the standard library's regex parser; private, so its absence only costs the index
    from re import _constants as _sre
    from re import _parser as _parse
except ImportError:  # pragma: no cover - every supported Python has it
    _parse = None  # type: ignore[assignment]


class _Unknown(Exception):
    """A construct the reading does not take apart: the pattern may open with anything."""


def openings(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """The characters a non-empty match of `pattern` can start with, both cases of each for
    a case-insensitive pattern; None when that is not known (any character may)."""
    if _parse is None:
        return None
    try:
        found, _ = _sequence(_parse.parse(pattern.pattern, pattern.flags))
    except (_Unknown, re.error, TypeError, ValueError):
        return None
    if pattern.flags & re.IGNORECASE:
        if not all(char.isascii() for char in found):
            return None
        found = {variant for char in found for variant in (char.lower(), char.upper())}
    return frozenset(found)


def _sequence(items: Iterable[tuple[Any, Any]]) -> tuple[set[str], bool]:
    """The opening characters of a sequence of parsed items, and whether it can be empty."""
    found: set[str] = set()
    for op, value in items:
        first, empty = _item(op, value)
        found |= first
        if not empty:
            return found, False
    return found, True


def _item(op: Any, value: Any) -> tuple[set[str], bool]:
    if op is _sre.LITERAL:
        return {chr(value)}, False
    if op is _sre.IN:
        return _class(value), False
    if op is _sre.BRANCH:
        found: set[str] = set()
        empty = False
        for branch in value[1]:
            first, can_be_empty = _sequence(branch)
            found |= first
            empty = empty or can_be_empty
        return found, empty
    if op is _sre.SUBPATTERN:
        _group, add_flags, del_flags, items = value
        if add_flags or del_flags:
            raise _Unknown  # an inline flag may change how the characters compare
        return _sequence(items)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
        least, _most, items = value
        first, empty = _sequence(items)
        return first, empty or least == 0
    if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
        return set(), True  # zero width: the characters after it open the match
    raise _Unknown


def _class(items: Sequence[tuple[Any, Any]]) -> set[str]:
    found: set[str] = set()
    for op, value in items:
        if op is _sre.LITERAL:
            found.add(chr(value))
        elif op is _sre.RANGE and value[1] - value[0] < 256:
            found.update(map(chr, range(value[0], value[1] + 1)))
        else:
            raise _Unknown  # a negated class, a category (\w, \s), a wide range
    return found


class OpeningIndex(Generic[T]):
    """A rule table (pattern, then what goes with it) and, per opening ASCII character, the
    rules a text opening with it can match, in table order. Read on first use, character by
    character: parsing the table costs about 8 ms, which a process's start need not pay."""

    def __init__(self, rules: Sequence[tuple[re.Pattern[str], T]]) -> None:
        self._rules = tuple(rules)
        self._opens: list[frozenset[str] | None] | None = None
        # Filled from an extraction worker thread: each entry is the same whoever fills it.
        self._by_char: dict[str, tuple[tuple[re.Pattern[str], T], ...]] = {}

    def for_text(self, text: str) -> tuple[tuple[re.Pattern[str], T], ...]:
        """The rules that can match `text` whole, in table order (every rule for a text that
        opens with a non-ASCII character, or is empty)."""
        first = text[:1]
        if not first or not first.isascii():
            return self._rules
        rules = self._by_char.get(first)
        if rules is None:
            if self._opens is None:
                self._opens = [openings(pattern) for pattern, _ in self._rules]
            rules = self._by_char[first] = tuple(
                rule
                for rule, chars in zip(self._rules, self._opens, strict=True)
                if chars is None or first in chars
            )
        return rules
