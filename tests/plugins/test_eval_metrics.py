"""Ranking metrics used by `agent-memory eval retrieval` (R-BEYOND-2)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_plugins.eval.metrics import dedupe, mrr_at, ndcg_at, recall_at


def test_metrics_on_a_worked_ranking() -> None:
    """R-BEYOND-2: Recall@k, MRR@k and nDCG@k by their binary-relevance definitions."""
    ranking = ["x", "a", "y", "b", "z"]
    relevant = {"a", "b"}
    assert recall_at(ranking, relevant, 5) == 1.0
    assert recall_at(ranking, relevant, 2) == 0.5
    assert mrr_at(ranking, relevant, 10) == 0.5
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at(ranking, relevant, 10) == pytest.approx(expected)


def test_a_duplicate_id_counts_once() -> None:
    """A ranking that repeats a relevant id gains nothing from the repeat."""
    assert dedupe(["a", "a", "b"]) == ["a", "b"]
    assert ndcg_at(["a", "a"], {"a", "b"}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_no_relevant_hit_scores_zero_and_bad_input_is_refused() -> None:
    assert recall_at(["x"], {"a"}, 5) == 0.0
    assert mrr_at(["x"], {"a"}, 5) == 0.0
    assert ndcg_at(["x"], {"a"}, 5) == 0.0
    with pytest.raises(ValueError, match="relevant"):
        recall_at(["a"], set(), 5)
    with pytest.raises(ValueError, match="positive"):
        mrr_at(["a"], {"a"}, 0)


@given(
    ranking=st.lists(st.sampled_from("abcdefgh"), max_size=12),
    relevant=st.sets(st.sampled_from("abcdefgh"), min_size=1),
    k=st.integers(min_value=1, max_value=12),
)
def test_metrics_stay_in_the_unit_interval(ranking: list[str], relevant: set[str], k: int) -> None:
    for metric in (recall_at, mrr_at, ndcg_at):
        assert 0.0 <= metric(ranking, relevant, k) <= 1.0 + 1e-12
    perfect = sorted(relevant)
    assert ndcg_at(perfect, relevant, k) == pytest.approx(1.0)
