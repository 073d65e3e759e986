"""Detector hints (issue 15): what a text must hold for a detector to match it, so the
policy runs a pattern only over text that could hold a match."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

__all__ = ["Hint", "Prefilter"]

_DIGITLESS = str.maketrans("", "", "0123456789")


def _groups(groups: Iterable[Iterable[str]]) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(group) for group in groups)


@attrs.frozen(kw_only=True)
class Hint:
    """What a text must hold for a detector to match it: a prefilter, so the policy runs a
    detector's pattern only over text that could hold a match (most text holds none; the
    patterns cost most of a write's CPU, issue 15). Each group needs one of its strings.

    `cased` strings are searched in the text as it is: the pattern spells each of them
    outside any case-insensitive group, so every match holds one verbatim. `lowered` strings
    and `digits` are judged only when the text is ASCII, over its `lower()`: there a
    `(?i:...)` group matches exactly what lower-casing makes equal, and `\\d` only ASCII
    digits. In other text Unicode case rules (the Kelvin sign matches `k`, `ſ` matches `s`)
    and Unicode digits apply, so those groups admit it and the pattern decides."""

    cased: tuple[frozenset[str], ...] = attrs.field(default=(), converter=_groups)
    lowered: tuple[frozenset[str], ...] = attrs.field(default=(), converter=_groups)
    digits: int = 0  # an ASCII text holds at least this many ASCII digits

    def admits(self, text: str, lowered: str | None, digits: int) -> bool:
        """Whether `text` may hold a match, given its `lower()` (None: it is not ASCII) and
        its count of ASCII `digits`."""
        for group in self.cased:
            if not any(needle in text for needle in group):
                return False
        if lowered is None:
            return True
        if digits < self.digits:
            return False
        return all(any(needle in lowered for needle in group) for group in self.lowered)


@attrs.frozen
class Prefilter:
    """The detectors of a table (by position) that may match a text, by their hints (None:
    always run). Each hint string is searched once per text, whichever hints share it, and
    only the hints one of whose strings the text holds are asked (most text holds none)."""

    hints: tuple[Hint | None, ...] = attrs.field(converter=tuple)
    # Positions asked whatever the text holds: no hint, or a hint of digits only.
    _always: frozenset[int] = attrs.field(init=False)
    # Positions by each string of the hint's first group (cased first, else lowered): a hint
    # can admit only a text holding one of them.
    _by_cased: dict[str, frozenset[int]] = attrs.field(init=False)
    _by_lowered: dict[str, frozenset[int]] = attrs.field(init=False)
    # Positions whose first group is lowered: asked for every text that is not ASCII.
    _unless_ascii: frozenset[int] = attrs.field(init=False)

    @_always.default
    def _positions_always(self) -> frozenset[int]:
        return frozenset(
            index
            for index, hint in enumerate(self.hints)
            if hint is None or not (hint.cased or hint.lowered)
        )

    @_by_cased.default
    def _positions_by_cased(self) -> dict[str, frozenset[int]]:
        return _by_string((i, h.cased[0]) for i, h in enumerate(self.hints) if h and h.cased)

    @_by_lowered.default
    def _positions_by_lowered(self) -> dict[str, frozenset[int]]:
        return _by_string(
            (i, h.lowered[0]) for i, h in enumerate(self.hints) if h and not h.cased and h.lowered
        )

    @_unless_ascii.default
    def _positions_unless_ascii(self) -> frozenset[int]:
        return frozenset().union(*self._by_lowered.values())

    def admitted(self, text: str) -> list[int]:
        """Positions of the detectors to run over `text`, in table order."""
        asked = set(self._always)
        for needle, positions in self._by_cased.items():
            if needle in text:
                asked |= positions
        lowered: str | None = None
        digits = 0
        if text.isascii():
            lowered = text.lower()
            for needle, positions in self._by_lowered.items():
                if needle in lowered:
                    asked |= positions
            digits = len(text) - len(text.translate(_DIGITLESS))
        else:
            asked |= self._unless_ascii
        hints = self.hints
        return [
            index
            for index in sorted(asked)
            if (hint := hints[index]) is None or hint.admits(text, lowered, digits)
        ]


def _by_string(groups: Iterable[tuple[int, frozenset[str]]]) -> dict[str, frozenset[int]]:
    positions: dict[str, set[int]] = {}
    for index, group in groups:
        for needle in group:
            positions.setdefault(needle, set()).add(index)
    return {needle: frozenset(indexes) for needle, indexes in positions.items()}
