"""Retrieval's rounds: each source's depth across refills, and one round's store reads.

A round scans the vectors, then reads in one blocking hop the FTS hits, their authoritative
rows and the vector hits' rows (R-READ-3); while fewer than top-K candidates survive, every
saturated source is deepened ×growth up to the cap and the round runs again.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from memory_core.domain.claims import Claim, EmbeddingIdentity
from memory_core.domain.manifest import Degradation
from memory_core.domain.scope import ScopeFilter
from memory_core.ports.claims import ClaimSearch, FtsHit, MatchMode
from memory_core.ports.clock import InfraClock

__all__ = ["Round", "Source", "elapsed_ms", "grow", "read_round"]


def elapsed_ms(clock: InfraClock, since: float) -> float:
    """Milliseconds on `clock` since `since` (never negative: a stage's timing)."""
    return max(0.0, 1000.0 * (clock.monotonic() - since))


@attrs.define
class Source:
    """One candidate source's state across refills."""

    limit: int
    returned: int = 0
    saturated: bool = False


def grow(
    sources: Sequence[Source], *, cap: int, growth: int, degradations: set[Degradation]
) -> bool:
    """Deepen every saturated source ×growth up to the cap; False when none can grow."""
    grew = False
    for source in sources:
        if not source.saturated:
            continue
        if source.limit >= cap:
            degradations.add(Degradation.CANDIDATE_BUDGET_EXHAUSTED)
            continue
        source.limit = min(cap, source.limit * growth)
        grew = True
    return grew


@attrs.frozen
class Round:
    """What one round's blocking hop read."""

    fts_hits: Sequence[FtsHit]
    fts_claims: list[Claim]
    vector_claims: Sequence[Claim]
    revalidation_ms: float  # of the FTS and vector hits' rows (the search's own is not in it)


def read_round(
    store: ClaimSearch,
    clock: InfraClock,
    agent: str,
    terms: Sequence[str],
    *,
    scope_filter: ScopeFilter,
    fts_limit: int,
    match_mode: MatchMode,
    vector_ids: Sequence[str],
    identity: EmbeddingIdentity | None,
) -> Round:
    """One round's store reads, in one blocking hop: the FTS hits, then the authoritative
    rows of the FTS and the vector hits in one re-validation (R-READ-3) — a vector hit's
    row only counts when it is ready in the certified identity, judged on the row read. A
    hit whose row the search read itself (`FtsHit.claim`) is not read again: its row is as
    of the search's statement, the others as of the re-validation's. A write committed in
    between (the round is one blocking hop, so only another thread's or process's) may be
    seen by one and not the other, as between a turn's other reads (directives, persona,
    the stored working projection)."""
    hits: Sequence[FtsHit] = ()
    if terms:
        hits = store.search_fts(
            agent, terms, scope_filter=scope_filter, limit=fts_limit, match_mode=match_mode
        )
    fts_ids = [hit.claim_id for hit in hits]
    started = clock.monotonic()
    # A carried row counts only as the hit's own and the agent's (a plugin's slip must not
    # put another claim, or another agent's, in the turn); any other hit is read below.
    by_id = {
        hit.claim_id: hit.claim
        for hit in hits
        if hit.claim is not None and hit.claim.id == hit.claim_id and hit.claim.agent_id == agent
    }
    # Vector hits exist only under a certificate; without one no vector row is read.
    wanted = [cid for cid in fts_ids if cid not in by_id]
    if identity is not None:
        wanted += [cid for cid in vector_ids if cid not in by_id]
    if wanted:
        found = store.list_applicable_by_ids(agent, wanted, scope_filter=scope_filter)
        by_id.update((claim.id, claim) for claim in found)
    vector_claims: list[Claim] = []
    if identity is not None:
        for claim_id in vector_ids:
            claim = by_id.get(claim_id)
            if claim is not None and claim.is_ready_in(identity):
                vector_claims.append(claim)
    return Round(
        fts_hits=hits,
        fts_claims=[by_id[claim_id] for claim_id in fts_ids if claim_id in by_id],
        vector_claims=vector_claims,
        revalidation_ms=elapsed_ms(clock, started),
    )
