"""Per-turn helpers as they were before they were made cheaper (issue 15), kept verbatim as
the reference the equivalence tests compare the current ones with. Test support only."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from memory_core.domain.claims import Claim
from memory_core.domain.temporal import Interval, TemporalKind
from memory_core.domain.tokens import is_cjk_like
from memory_core.services.read.claim_tokens import ClaimTokenCache
from memory_core.services.read.fusion import Candidate, FusionConstants
from memory_core.services.read.keywords import _WORD, ENGLISH_STOPWORDS, stem
from memory_core.services.read.sanitizer import _ASCII_CONTROLS, _drop_invisible, _maybe_invisible

__all__ = [
    "former_coverage",
    "former_coverage_tokens",
    "former_jaccard_at_least",
    "former_period_matches",
    "former_rrf_term",
    "former_strip_invisible",
    "former_token_set",
]


def former_period_matches(periods: tuple[Interval, ...], claim: Claim) -> bool:
    """`QueryPeriods.matches` as it was."""
    temporal = claim.temporal
    return any(
        period.contains(claim.created_at)
        or (temporal.kind is not TemporalKind.ATEMPORAL and temporal.interval.overlaps(period))
        for period in periods
    )


def former_jaccard_at_least(left: frozenset[str], right: frozenset[str], threshold: float) -> bool:
    small, large = len(left), len(right)
    if small > large:
        small, large = large, small
    if not large or small / large < threshold:
        return False
    return len(left & right) / len(left | right) >= threshold


def former_rrf_term(
    candidate: Candidate, constants: FusionConstants, *, in_named_period: bool
) -> float:
    total = 0.0
    for rank, weight in (
        (candidate.fts_rank, 1.0),
        (candidate.vector_rank, constants.rrf_vector_weight),
    ):
        if rank is not None and (constants.rrf_depth is None or rank < constants.rrf_depth):
            total += weight / (constants.rrf_k + rank + 1)
    total += constants.weight_coverage * (candidate.coverage or 0.0)
    if in_named_period:
        total += constants.weight_period
    return total


_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x85\u2028\u2029]")


def former_strip_invisible(text: str) -> str:
    unified = _LINE_BREAKS.sub("\n", text)
    if unified.isascii():
        return _ASCII_CONTROLS.sub("", unified)
    return _maybe_invisible().sub(_drop_invisible, unified)


def former_coverage_tokens(text: str) -> frozenset[str]:
    runs = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
    if text.isascii():
        return frozenset([stem(run) for run in runs if run not in ENGLISH_STOPWORDS])
    tokens: set[str] = set()
    for run in runs:
        if run[0].isascii():
            if run not in ENGLISH_STOPWORDS:
                tokens.add(stem(run))
        elif len(run) == 1:
            tokens.add(run)
        else:
            tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(tokens)


def former_coverage(
    query: str, claims: Sequence[Claim], cache: ClaimTokenCache
) -> dict[str, float]:
    """`lexical_rank._coverage` as it was."""
    wanted = former_coverage_tokens(query)
    tokens = {claim.id: wanted & cache.coverage(claim) for claim in claims}
    frequency = Counter(token for found in tokens.values() for token in found)
    weight = {token: math.log(1 + len(claims) / max(1, frequency[token])) for token in wanted}
    total = sum(weight.values()) or 1.0
    return {cid: sum(weight[token] for token in found) / total for cid, found in tokens.items()}


def former_token_set(text: str) -> frozenset[str]:
    tokens: set[str] = set()
    for word in re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text).casefold()):
        if len(word) > 1 and not word.isascii() and any(is_cjk_like(char) for char in word):
            tokens.update(word[i : i + 2] for i in range(len(word) - 1))
        else:
            tokens.add(word)
    return frozenset(tokens)
