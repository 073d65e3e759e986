"""Query vector checks: a query of Python floats (what the gateway hands over) takes a path
of its own, which must answer exactly as the numpy path does for the same values — the same
unit row bit for bit, or the same typed error (R-VEC-1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_adapters.duckdb_vectors.validation import as_query_matrix
from memory_core.domain.errors import ValidationError

DIM = 8
# Magnitudes around float32's limits (overflow, underflow to zero, subnormals), NaN and inf.
values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-46, 1e-40, 1.1754943e-38, 3.4028234e38, 3.4028236e38, 1e39]),
    st.floats(min_value=-2.0, max_value=2.0),
)


def _answer(query: object) -> bytes | str:
    try:
        return as_query_matrix([query], DIM).view(np.uint32).tobytes()  # type: ignore[list-item]
    except ValidationError as error:
        return str(error)


@settings(max_examples=400, deadline=None)
@given(st.lists(values, min_size=DIM, max_size=DIM))
def test_a_query_of_python_floats_answers_as_the_same_values_as_an_array(query):
    assert _answer(tuple(query)) == _answer(np.asarray(query, dtype=np.float64))


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ((float("nan"),) + (1.0,) * (DIM - 1), "finite"),
        ((float("inf"),) + (1.0,) * (DIM - 1), "finite"),
        ((1e39,) + (1.0,) * (DIM - 1), "finite"),  # overflows in float32
        ((0.0,) * DIM, "zero"),
        ((1e-46,) * DIM, "zero"),  # underflows to zero in float32
        ((1.0,) * (DIM - 1), "dimension"),
        ((True,) * DIM, "numbers"),
        (("1.0",) * DIM, "numbers"),
    ],
)
def test_bad_queries_are_rejected_with_a_typed_error(query, reason):
    with pytest.raises(ValidationError, match=reason):
        as_query_matrix([query], DIM)
