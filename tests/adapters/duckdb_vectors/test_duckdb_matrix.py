"""The resident matrix: exact top-k with the id tie-break, kept dense under upserts and
deletes (R-VEC-1, R-READ-8)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_adapters.duckdb_vectors.matrix import ResidentMatrix
from memory_adapters.duckdb_vectors.validation import unit_rows

DIM = 3
# Few distinct directions, so ties are common and the tie-break is exercised.
DIRECTIONS = [(1, 0, 0), (0, 1, 0), (1, 1, 0), (-1, 0, 0), (1, 1, 1), (0, 0, 2)]

ids = st.sampled_from([f"id{i:02d}" for i in range(25)])
operations = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.dictionaries(ids, st.sampled_from(DIRECTIONS), max_size=6)),
        st.tuples(st.just("remove"), st.lists(ids, max_size=6)),
    ),
    max_size=25,
)


def unit(vector: tuple[float, ...]) -> np.ndarray:
    return unit_rows(np.asarray([vector], dtype=np.float32))[0]


@settings(max_examples=200, deadline=None)
@given(operations, st.sampled_from(DIRECTIONS), st.integers(min_value=0, max_value=30))
def test_top_k_matches_a_brute_force_ranking_after_any_history(
    history: list[tuple[str, object]], query: tuple[float, ...], k: int
) -> None:
    """R-READ-8: after any sequence of upserts and deletes, top-k is the brute-force ranking
    by similarity descending, then id ascending."""
    matrix = ResidentMatrix(DIM, capacity=1)  # forces growth
    model: dict[str, np.ndarray] = {}
    for kind, payload in history:
        if kind == "upsert":
            batch = dict(payload)  # type: ignore[call-overload]
            rows = np.asarray([unit(v) for v in batch.values()], dtype=np.float32).reshape(-1, DIM)
            matrix.upsert(list(batch), rows)
            model.update(dict(zip(batch, rows, strict=True)))
        else:
            removed = matrix.remove(payload)  # type: ignore[arg-type]
            assert removed == len({i for i in payload if i in model})  # type: ignore[union-attr]
            for claim_id in payload:  # type: ignore[union-attr]
                model.pop(claim_id, None)
    assert matrix.ids() == sorted(model)
    q = unit(query)
    expected = sorted(
        ((float(np.float32(vector @ q)), claim_id) for claim_id, vector in model.items()),
        key=lambda pair: (-pair[0], pair[1]),
    )[:k]
    (answer,) = matrix.top_k(q[None, :], k)
    assert [claim_id for claim_id, _ in answer] == [claim_id for _, claim_id in expected]
    assert np.allclose([score for _, score in answer], [score for score, _ in expected], atol=1e-6)


def test_ties_at_the_cut_are_broken_by_id_not_by_storage_order() -> None:
    """R-READ-8: the k-th place goes to the smallest id among equal scores, wherever it sits."""
    matrix = ResidentMatrix(DIM)
    same = unit((1, 1, 0))
    names = [f"t{i:03d}" for i in range(200)]
    order = np.random.default_rng(3).permutation(len(names))
    matrix.upsert([names[i] for i in order], np.tile(same, (len(names), 1)))
    (answer,) = matrix.top_k(same[None, :], 5)
    assert [claim_id for claim_id, _ in answer] == names[:5]


def test_query_batches_and_exclusion_answer_each_query_independently() -> None:
    """R-VEC-1: one scan for many queries; the excluded id only leaves its own answer."""
    matrix = ResidentMatrix(DIM)
    matrix.upsert(["x", "y", "z"], np.asarray([unit(v) for v in DIRECTIONS[:3]]))
    queries = np.asarray([unit((1, 0, 0)), unit((0, 1, 0))])
    first, second = matrix.top_k(queries, 2, exclude=["x", None])
    assert [claim_id for claim_id, _ in first] == ["z", "y"]
    assert [claim_id for claim_id, _ in second] == ["y", "z"]
    assert matrix.top_k(queries[:0], 3) == []
    assert ResidentMatrix(DIM).top_k(queries, 3) == [[], []]


def test_similarities_stay_within_the_cosine_range() -> None:
    """R-VEC-1: float32 rounding never reports a similarity above 1 or below -1."""
    rng = np.random.default_rng(5)
    rows = unit_rows(rng.standard_normal((50, 64)).astype(np.float32))
    matrix = ResidentMatrix(64)
    matrix.upsert([f"r{i}" for i in range(50)], rows)
    answers = matrix.top_k(np.concatenate([rows, -rows]), 50)
    assert all(-1.0 <= score <= 1.0 for answer in answers for _, score in answer)
    assert answers[0][0][0] == "r0"
    assert abs(answers[0][0][1] - 1.0) < 1e-6
    assert answers[50][0][0] != "r0"  # the negated row is r0's least similar
