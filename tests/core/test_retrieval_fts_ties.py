"""Rows the lexical index scores equally share one FTS rank in the fusion (R-READ-8).

The store breaks bm25 ties by importance and then by id (a random token). Counted as lexical
rank, that order gave the more important of two equally matching rows a better RRF term
(importance weighed twice) and left the rest to the id; measured on DeepChat's retrieval
fixture it cost hybrid MRR@10 0.13 at small RRF k (docs/evaluation.md).
"""

from __future__ import annotations

import asyncio

import pytest

from memory_adapters.offload import InlineCalls
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, ClaimKind, WriteOrigin
from memory_core.services.read.fusion import candidates_from_lists
from memory_core.services.read.retrieval.service import RetrievalRequest, RetrievalService
from memory_core.services.read.scoring import ScoringPolicy
from memory_core.settings import MemorySettings

AGENT = "agent-a"


def test_an_fts_rank_override_replaces_the_list_position() -> None:
    """R-READ-8: `fts_ranks` sets each FTS candidate's rank; unlisted ones keep position."""
    clock = ManualClock()
    store = InMemoryClaimStore(clock=clock)
    claims = [
        store.insert(
            ClaimDraft(agent_id=AGENT, kind=ClaimKind.SEMANTIC, content=text),
            origin=WriteOrigin.USER_ADD,
            now=clock.now(),
        ).claim
        for text in ("first row", "second row", "third row")
    ]
    assert all(claim is not None for claim in claims)
    first, second, third = claims  # type: ignore[misc]

    merged = candidates_from_lists(
        [first, second, third], [], fts_ranks={first.id: 0, second.id: 0}
    )

    assert [c.fts_rank for c in merged] == [0, 0, 2]


def test_equally_matching_rows_get_the_same_rrf_term() -> None:
    """R-READ-8: two rows matching the query equally get one rank (the tie's first
    position) whatever their importance; a weaker match ranks after the whole tie."""
    clock = ManualClock()
    store = InMemoryClaimStore(clock=clock)
    settings = MemorySettings()
    service = RetrievalService(
        store=store, calls=InlineCalls(), domain_clock=clock, infra_clock=clock, settings=settings
    )

    def add(content: str, importance: float) -> str:
        outcome = store.insert(
            ClaimDraft(
                agent_id=AGENT, kind=ClaimKind.SEMANTIC, content=content, importance=importance
            ),
            origin=WriteOrigin.USER_ADD,
            now=clock.now(),
        )
        assert outcome.claim is not None
        return outcome.claim.id

    important = add("Orion still runs the legacy scheduler", 0.9)
    modest = add("Orion moved off the legacy scheduler in May", 0.3)
    weaker = add("Orion release notes", 0.5)

    result = asyncio.run(
        service.retrieve(
            RetrievalRequest(agent_id=AGENT, query="Orion legacy scheduler"),
            deadline=Deadline.after(clock, 5),
            cancel=CancellationToken(),
        )
    )

    rrf = {item.claim.id: item.breakdown.rrf for item in result.items}
    k = settings.rrf_k
    # Both cover the whole query: the same rank and the same coverage term.
    full = 1 / (k + 1) + ScoringPolicy().weight_coverage
    assert rrf[important] == pytest.approx(rrf[modest]) == pytest.approx(full)
    assert rrf[weaker] < 1 / (k + 2 + 1) + ScoringPolicy().weight_coverage
