"""The lexical rank of FTS candidates: whole-word coverage of the query, then bm25.

Trigram bm25 cannot see one- and two-character words ("policy 2" ties with "policy 12"),
and the store breaks its ties by importance and a random id. Ranking by coverage first —
each query word weighted by its rarity among the candidates — and letting rows the index
scored equally share one rank keeps both out of the fusion (R-READ-8).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import chain

import attrs

from memory_core.domain.claims import Claim
from memory_core.services.read.claim_tokens import ClaimTokenCache
from memory_core.services.read.keywords import coverage_tokens

__all__ = ["LexicalRanking", "lexical_ranks"]


@attrs.frozen(kw_only=True)
class LexicalRanking:
    claims: list[Claim]  # reordered by coverage, bm25 within equal coverage
    ranks: dict[str, int]  # shared 0-based rank per claim id
    coverage: dict[str, float]  # weighted share of the query each claim covers, in [0, 1]


def lexical_ranks(
    query: str,
    claims: Sequence[Claim],
    index_scores: dict[str, float],
    *,
    tokens: ClaimTokenCache,
) -> LexicalRanking:
    """`claims` (in index order) reordered by coverage, each one's shared rank and coverage.

    A claim's tokens come from `tokens` (computed once per revision), so the cost per
    candidate is an intersection with the query's few tokens, whatever the claim's length."""
    coverage = _coverage(query, claims, tokens)
    ordered = sorted(claims, key=lambda claim: -coverage[claim.id])  # stable: bm25 in ties
    keys = {cid: (-coverage[cid], index_scores[cid]) for cid in coverage}
    return LexicalRanking(claims=ordered, ranks=_shared_ranks(ordered, keys), coverage=coverage)


def _coverage(query: str, claims: Sequence[Claim], cache: ClaimTokenCache) -> dict[str, float]:
    """How much of the query each claim covers, words weighted by their rarity among the
    candidates (a local IDF): a word every candidate shares — a speaker's name, the query's
    topic — decides nothing, a number or name only one row has decides a lot."""
    wanted = coverage_tokens(query)
    tokens = {claim.id: wanted & cache.coverage(claim) for claim in claims}
    frequency = Counter(chain.from_iterable(tokens.values())).get
    count = len(claims)
    # A pasted query has a hundred words, most in no candidate: their weight is one value.
    unseen = math.log(1 + count / max(1, 0))
    weight = {
        token: unseen if (seen := frequency(token)) is None else math.log(1 + count / max(1, seen))
        for token in wanted
    }
    total = sum(weight.values()) or 1.0
    # Summed in the same order as before (each found set's own), so the floats are the same.
    of = weight.__getitem__
    return {cid: sum(map(of, found)) / total for cid, found in tokens.items()}


def _shared_ranks(
    claims: Sequence[Claim], index_scores: dict[str, tuple[float, float]]
) -> dict[str, int]:
    """Each claim's position, where a run of claims the index scored equally shares the run's
    first position. The store orders equal scores by importance and then id (a random token):
    counting that order as lexical rank in the fusion would weigh importance twice and let
    the id decide — an identical row of a more important claim would always win."""
    ranks: dict[str, int] = {}
    start, previous = 0, None
    for position, claim in enumerate(claims):
        score = index_scores.get(claim.id)
        if (
            score is None
            or previous is None
            or score[0] != previous[0]
            or not math.isclose(score[1], previous[1], rel_tol=1e-9)
        ):
            start = position
        ranks[claim.id] = start
        previous = score
    return ranks
