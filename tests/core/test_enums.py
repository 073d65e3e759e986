"""`member_of` answers exactly what the enum's own call answers — a member for a member,
its value or an alias, the enum's ValueError for anything else — so the cheaper converters
of Claim, ClaimDraft and TemporalMetadata keep their rules (R-DOM-4, R-TIME-2)."""

from __future__ import annotations

from enum import StrEnum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.claims import (
    Category,
    ClaimKind,
    EmbeddingState,
    Lifecycle,
)
from memory_core.domain.enums import member_of
from memory_core.domain.temporal import Precision, TemporalKind

ENUMS: list[type[StrEnum]] = [
    ClaimKind,
    Category,
    Lifecycle,
    EmbeddingState,
    TemporalKind,
    Precision,
]


class _Text(str):
    """A str subclass equal to a value, as an unusual driver might return."""


def _outcome(convert: object, value: object) -> object:
    try:
        return ("member", convert(value))  # type: ignore[operator]
    except ValueError:
        return ValueError


CANDIDATES: list[object] = [
    *(member for enum in ENUMS for member in enum),
    *(member.value for enum in ENUMS for member in enum),
    *(_Text(member.value) for enum in ENUMS for member in enum),
    "exact",
    " EXACT ",
    "SEMANTIC",
    "",
    None,
    0,
    1.5,
    b"semantic",
    ["semantic"],
    {"kind": "semantic"},
]


@pytest.mark.parametrize("enum", ENUMS, ids=lambda enum: enum.__name__)
@pytest.mark.parametrize("value", CANDIDATES, ids=repr)
def test_member_of_answers_as_the_enum_does(enum: type[StrEnum], value: object) -> None:
    ours = _outcome(member_of(enum), value)
    assert ours == _outcome(enum, value)
    if ours is not ValueError:
        assert type(ours[1]) is enum  # type: ignore[index]


@given(st.text(max_size=12))
def test_member_of_answers_any_text_as_the_enum_does(value: str) -> None:
    for enum in ENUMS:
        assert _outcome(member_of(enum), value) == _outcome(enum, value)
