"""The insert path's row helpers made cheaper for issue 15 bind exactly what their former
versions (former_write_rows.py) bound: a row's column values and SQLite's encoding of each
(R-DOM-3: what is stored is what was prepared)."""

from __future__ import annotations

import enum
import math
from datetime import UTC, datetime, timedelta, timezone

import attrs
import pytest
from former_write_rows import former_encode, former_values
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_adapters.sql_claims.rows import ClaimRow
from memory_adapters.sqlite_store.dialect import SQLITE
from memory_core.domain.claims import ClaimKind, EmbeddingState

NOW = datetime(2026, 6, 1, 12, 0, 0, 123456, tzinfo=UTC)


class _Flag(int, enum.Enum):
    ON = 1


class _Text(str):
    pass


VALUES = [
    None, "", "x", "é\x00中", _Text("sub"), 0, -1, 2**70, True, False, 0.5, -0.0, math.inf,
    math.nan, ClaimKind.SEMANTIC, EmbeddingState.PENDING, _Flag.ON, NOW,
    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), [], ["a", "b"], (), ("m1", "m2"),
    {"released": 1, "reauthorized": True}, {}, b"raw",
]  # fmt: skip


def _same(left: object, right: object) -> bool:
    if isinstance(left, float) and math.isnan(left):
        return isinstance(right, float) and math.isnan(right)
    return type(left) is type(right) and left == right


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_each_value_is_bound_as_before(value: object) -> None:
    assert _same(SQLITE.encode(value), former_encode(value))


def _outcome(encode: object, value: object) -> object:
    try:
        return encode(value)  # type: ignore[operator]
    except Exception as exc:  # the error's type is what is compared
        return type(exc)


@pytest.mark.parametrize(
    "value",
    [datetime(2026, 1, 1), datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))],
    ids=["naive", "other-zone"],
)
def test_a_naive_or_foreign_zone_datetime_is_treated_as_before(value: datetime) -> None:
    assert _outcome(SQLITE.encode, value) == _outcome(former_encode, value)


_TEXT = st.text(max_size=20)
_ROWS = st.builds(
    ClaimRow,
    id=_TEXT,
    agent_id=_TEXT,
    kind=st.sampled_from([k.value for k in ClaimKind]),
    content=_TEXT,
    canonical_content=_TEXT,
    category=st.none() | _TEXT,
    importance=st.floats(allow_nan=False),
    confidence=st.none() | st.floats(0, 1),
    valid_from=st.none() | st.just(NOW),
    scope_id=st.none() | _TEXT,
    source_entry_ids=st.lists(_TEXT, max_size=3).map(tuple),
    source_first_seq=st.none() | st.integers(),
    embedding_dim=st.none() | st.integers(1, 4096),
    created_at=st.just(NOW),
    updated_at=st.just(NOW + timedelta(seconds=1)),
    slot=st.none() | _TEXT,
)


@settings(max_examples=200, deadline=None)
@given(row=_ROWS)
def test_a_rows_values_and_their_encoding_are_the_former_ones(row: ClaimRow) -> None:
    values = row.values()
    assert values == former_values(row)
    assert [SQLITE.encode(v) for v in values] == [former_encode(v) for v in former_values(row)]
    assert attrs.evolve(row).values() == values
