"""Ranking metrics with binary relevance: Recall@k, MRR@k, nDCG@k.

Definitions follow DeepChat's retrieval gate (reference §10.2) so our numbers compare with
its recorded run: a duplicate id in a ranking counts once, Recall@k is the share of the
relevant ids found in the top k, and the ideal DCG is taken over min(k, #relevant) hits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["dedupe", "mrr_at", "ndcg_at", "recall_at"]


def dedupe(ranking: Iterable[str]) -> list[str]:
    """The ranking with repeated ids removed, first occurrence kept."""
    seen: set[str] = set()
    unique: list[str] = []
    for item in ranking:
        if item not in seen:
            seen.add(item)
            unique.append(item)
    return unique


def _check(relevant: Sequence[str] | set[str], k: int) -> set[str]:
    if k <= 0:
        raise ValueError("k must be positive")
    wanted = set(relevant)
    if not wanted:
        raise ValueError("a query needs at least one relevant id")
    return wanted


def recall_at(ranking: Sequence[str], relevant: Sequence[str] | set[str], k: int) -> float:
    wanted = _check(relevant, k)
    return len(wanted.intersection(dedupe(ranking)[:k])) / len(wanted)


def mrr_at(ranking: Sequence[str], relevant: Sequence[str] | set[str], k: int) -> float:
    wanted = _check(relevant, k)
    for position, item in enumerate(dedupe(ranking)[:k], start=1):
        if item in wanted:
            return 1.0 / position
    return 0.0


def ndcg_at(ranking: Sequence[str], relevant: Sequence[str] | set[str], k: int) -> float:
    wanted = _check(relevant, k)
    dcg = sum(
        1.0 / math.log2(position + 1)
        for position, item in enumerate(dedupe(ranking)[:k], start=1)
        if item in wanted
    )
    ideal = sum(1.0 / math.log2(position + 1) for position in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal
