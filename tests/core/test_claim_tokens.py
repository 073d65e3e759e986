"""Per-candidate ranking tokens cached per claim revision, within a token budget (issue 14)."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.errors import ConfigError
from memory_core.services.read.claim_tokens import ClaimTokenCache, token_set
from memory_core.services.read.keywords import coverage_tokens

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def claim(claim_id: str, content: str, revision: int = 1) -> Claim:
    return Claim(
        id=claim_id,
        agent_id="agent",
        kind=ClaimKind.SEMANTIC,
        content=content,
        canonical_content=content.lower(),
        revision=revision,
        created_at=NOW,
        updated_at=NOW,
    )


def test_tokens_are_computed_once_per_revision() -> None:
    """A second query over the same row reuses its sets; a new revision recomputes them."""
    cache = ClaimTokenCache()
    first = claim("a", "The user changed the deployment scripts.")
    tokens = cache.of(first)
    assert tokens.coverage == coverage_tokens(first.content)
    assert tokens.duplicate == token_set(first.content)
    assert cache.of(first) is tokens
    assert (cache.hits, cache.misses) == (1, 1)
    edited = attrs.evolve(first, content="The user reverted the scripts.", revision=2)
    assert "revert" in cache.of(edited).coverage
    assert cache.misses == 2


def test_the_cache_holds_at_most_its_token_budget() -> None:
    """Bounded by tokens held, oldest first out; a row larger than the budget is not held."""
    cache = ClaimTokenCache(token_budget=40)
    for n in range(20):
        cache.of(claim(f"c{n}", f"alpha beta gamma {n}"))
    assert cache.held <= 40
    assert 0 < len(cache) < 20
    huge = claim("huge", " ".join(f"word{n}" for n in range(100)))
    assert len(cache.of(huge).coverage) == 100
    assert cache.held <= 40


@pytest.mark.parametrize("budget", [0, -1, True, 1.5])
def test_an_unusable_budget_is_refused(budget: object) -> None:
    with pytest.raises(ConfigError, match="budget"):
        ClaimTokenCache(token_budget=budget)  # type: ignore[arg-type]


def test_a_retrieval_service_reuses_its_cache_across_queries_and_services() -> None:
    """Issue 14: ranking tokenises a candidate once; a second query, and a second service
    handed the same cache (as per-source rankings are), only hit it. Regression: an empty
    cache is falsy, and `tokens or ClaimTokenCache()` replaced it on every call."""
    import asyncio

    from memory_adapters.offload import InlineCalls
    from memory_contracts.fake_claim_store import InMemoryClaimStore
    from memory_contracts.fakes import ManualClock
    from memory_core.domain.cancellation import CancellationToken, Deadline
    from memory_core.domain.claims import ClaimDraft, WriteOrigin
    from memory_core.services.read.retrieval.service import RetrievalRequest, RetrievalService
    from memory_core.settings import MemorySettings

    clock = ManualClock()
    store = InMemoryClaimStore(clock=clock)
    for text in ("Orion runs the legacy scheduler", "Orion moved to the new scheduler"):
        draft = ClaimDraft(agent_id="agent-a", kind=ClaimKind.SEMANTIC, content=text)
        store.insert(draft, origin=WriteOrigin.USER_ADD, now=clock.now())
    cache = ClaimTokenCache()

    def ask(query: str) -> None:
        service = RetrievalService(
            store=store,
            calls=InlineCalls(),
            domain_clock=clock,
            infra_clock=clock,
            settings=MemorySettings(),
            tokens=cache,
        )
        assert service.tokens is cache
        request = RetrievalRequest(agent_id="agent-a", query=query)
        asyncio.run(
            service.retrieve(request, deadline=Deadline.after(clock, 5), cancel=CancellationToken())
        )

    ask("Orion scheduler")
    assert (len(cache), cache.misses) == (2, 2)
    ask("which scheduler does Orion run")
    assert cache.misses == 2
    assert cache.hits >= 2
