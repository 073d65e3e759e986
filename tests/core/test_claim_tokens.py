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
    again = cache.of(first)
    assert again.coverage is tokens.coverage and again.duplicate is tokens.duplicate
    assert (cache.hits, cache.misses) == (1, 1)
    edited = attrs.evolve(first, content="The user reverted the scripts.", revision=2)
    assert "revert" in cache.of(edited).coverage
    assert cache.misses == 2


@pytest.mark.parametrize("half", ["coverage", "collapse"])
def test_each_half_is_computed_once_per_revision_and_only_when_asked(half: str) -> None:
    """Issue 15: the lexical rank asks only for coverage, the near-duplicate walk only for the
    collapse tokens of the rows it reaches; the other half is neither computed nor held, and
    an edited revision (or a row rewritten to another length) never gets the old tokens."""
    cache = ClaimTokenCache()
    first = claim("a", "The user changed the deployment scripts.")
    ask = getattr(cache, half)
    found = ask(first)
    expected_size = len(found) if half == "coverage" else len(found[1]) + 1
    assert cache.held == expected_size
    assert ask(first) == found and cache.misses == 1
    edited = attrs.evolve(first, content="The user reverted the scripts.", revision=2)
    rewritten = attrs.evolve(first, content="The user reverted the old scripts.")
    for other in (edited, rewritten):
        fresh = ask(other)
        if half == "coverage":
            assert fresh == coverage_tokens(other.content) and "revert" in fresh
        else:
            assert fresh[1] == token_set(other.content) and "reverted" in fresh[1]
    assert cache.misses == 3


def test_a_forgotten_claims_tokens_leave_the_cache_within_its_budget() -> None:
    """R-FORGET-1 for process memory: nothing is evicted on delete, so the bound is the
    budget — once rows worth the budget were tokenised after it, a deleted claim's tokens
    (halves filled at different times included) are no longer held."""
    cache = ClaimTokenCache(token_budget=60)
    secret = claim("secret", "Nightjar launch codes rotate weekly")
    cache.coverage(secret)
    cache.collapse(secret)
    for n in range(30):
        cache.coverage(claim(f"c{n}", f"alpha beta {n}"))
    assert cache.held <= 60
    before = cache.misses
    cache.coverage(secret)
    assert cache.misses == before + 1  # recomputed: it was no longer held


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
