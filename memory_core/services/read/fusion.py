"""Fusion of the recall sources: the FTS and vector lists become one set of candidates, and
each candidate's rank evidence becomes one term of its score (R-READ-8).

    rrf = 1/(rrf_k + fts_rank + 1) + rrf_vector_weight/(rrf_k + vector_rank + 1)
          + weight_coverage·coverage + weight_period·[recorded in / valid during a period
          the query names]     (0-based ranks; ranks ≥ rrf_depth add 0)

Vector evidence more than `similarity_floor_gap` below the query's best similarity is set
aside before scoring. The constants are `ScoringPolicy`'s (`memory_core.services.read.scoring`),
read here through `FusionConstants`, so fusion needs nothing of the scoring it feeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import attrs

from memory_core.domain.claims import Claim
from memory_core.domain.errors import ValidationError
from memory_core.domain.manifest import CandidateSource

__all__ = [
    "Candidate",
    "FusionConstants",
    "candidates_from_lists",
    "merge_duplicate_ids",
    "rrf_term",
    "set_aside_distant_vectors",
]


class FusionConstants(Protocol):
    """The fusion's constants; `ScoringPolicy` is one of these."""

    @property
    def rrf_k(self) -> int: ...

    @property
    def rrf_depth(self) -> int | None: ...

    @property
    def rrf_vector_weight(self) -> float: ...

    @property
    def weight_coverage(self) -> float: ...

    @property
    def weight_period(self) -> float: ...

    @property
    def similarity_floor_gap(self) -> float | None: ...


def _rank(instance: object, attribute: attrs.Attribute, value: int | None) -> None:
    # Ranks are list positions nearly always: a plain non-negative int is answered first
    # (a turn builds some seventy candidates).
    if value is None or (value.__class__ is int and value >= 0):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"candidate.{attribute.name}", "must be a non-negative integer")


@attrs.frozen(kw_only=True)
class Candidate:
    """A re-validated claim with its 0-based rank in each source list it appeared in."""

    claim: Claim
    fts_rank: int | None = attrs.field(default=None, validator=_rank)
    vector_rank: int | None = attrs.field(default=None, validator=_rank)
    similarity: float | None = None  # set exactly when vector_rank is
    coverage: float | None = None  # the lexical rank's share of the query covered, FTS rows

    @property
    def sources(self) -> tuple[CandidateSource, ...]:
        found = []
        if self.fts_rank is not None:
            found.append(CandidateSource.FTS)
        if self.vector_rank is not None:
            found.append(CandidateSource.VECTOR)
        return tuple(found)


def candidates_from_lists(
    fts: Sequence[Claim],
    vector: Sequence[tuple[Claim, float]],
    *,
    fts_ranks: Mapping[str, int] | None = None,
    coverage: Mapping[str, float] | None = None,
) -> tuple[Candidate, ...]:
    """Merge the filtered FTS list (bm25 order) and vector list (similarity order) by claim id.

    Ranks are positions in the lists as given (after re-validation and suppression); a
    repeated id keeps its first (best) position. `fts_ranks` overrides FTS positions — the
    retrieval service passes shared ranks for rows the index scored equally, and each FTS
    row's `coverage` of the query.
    """
    merged: dict[str, Candidate] = {}
    for position, claim in enumerate(fts):
        if claim.id not in merged:
            rank = fts_ranks.get(claim.id, position) if fts_ranks else position
            covered = coverage.get(claim.id) if coverage else None
            merged[claim.id] = Candidate(claim=claim, fts_rank=rank, coverage=covered)
    for rank, (claim, similarity) in enumerate(vector):
        current = merged.get(claim.id)
        if current is None:
            merged[claim.id] = Candidate(claim=claim, vector_rank=rank, similarity=similarity)
        elif current.vector_rank is None:
            merged[claim.id] = attrs.evolve(current, vector_rank=rank, similarity=similarity)
    return tuple(merged.values())


def merge_duplicate_ids(candidates: Iterable[Candidate]) -> list[Candidate]:
    """One candidate per claim id, with the best rank per source of its copies: input order
    must not decide which copy of a claim handed over twice counts."""
    merged: dict[str, Candidate] = {}
    for candidate in candidates:
        current = merged.get(candidate.claim.id)
        if current is None:
            merged[candidate.claim.id] = candidate
            continue
        fts = [r for r in (current.fts_rank, candidate.fts_rank) if r is not None]
        best = min(
            (c for c in (current, candidate) if c.vector_rank is not None),
            key=lambda c: (c.vector_rank, -(c.similarity or 0.0)),
            default=None,
        )
        merged[candidate.claim.id] = Candidate(
            claim=current.claim,
            fts_rank=min(fts) if fts else None,
            vector_rank=best.vector_rank if best else None,
            similarity=best.similarity if best else None,
            coverage=max(
                (c.coverage for c in (current, candidate) if c.coverage is not None),
                default=None,
            ),
        )
    return list(merged.values())


def set_aside_distant_vectors(
    candidates: list[Candidate], constants: FusionConstants
) -> list[Candidate]:
    """Vector evidence more than `similarity_floor_gap` below the query's best similarity is
    set aside: what clears a fixed floor depends on the embedder and the script (MiniLM
    scores unrelated Chinese text 0.4–0.5), how far a hit lies below the best does not. A row
    FTS also found keeps its lexical evidence; a row only the vector source found goes."""
    gap = constants.similarity_floor_gap
    best = max((c.similarity for c in candidates if c.similarity is not None), default=None)
    if gap is None or best is None:
        return candidates
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.similarity is None or candidate.similarity >= best - gap:
            kept.append(candidate)
        elif candidate.fts_rank is not None:
            kept.append(attrs.evolve(candidate, vector_rank=None, similarity=None))
    return kept


def rrf_term(candidate: Candidate, constants: FusionConstants, *, in_named_period: bool) -> float:
    """The candidate's rank evidence: reciprocal ranks, lexical coverage and a named period."""
    # Unrolled over the two sources (the terms are added in the same order): it runs for
    # every candidate of every turn.
    depth, k = constants.rrf_depth, constants.rrf_k
    total = 0.0
    rank = candidate.fts_rank
    if rank is not None and (depth is None or rank < depth):
        total += 1.0 / (k + rank + 1)
    rank = candidate.vector_rank
    if rank is not None and (depth is None or rank < depth):
        total += constants.rrf_vector_weight / (k + rank + 1)
    total += constants.weight_coverage * (candidate.coverage or 0.0)
    if in_named_period:
        # The query names a period the claim was recorded in or holds during: evidence the
        # words alone cannot give (the date of a turn lives in when it was said).
        total += constants.weight_period
    return total
