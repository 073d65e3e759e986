"""R-WRITE-6: one claim the embedding provider always rejects must not hold back the others.

Batches are all-or-nothing at the provider, so the drain bisects a rejected batch: the halves
that embed are stored, the one text the provider refuses on its own is marked terminally
failed (ERROR), and doctor counts it. A retryable failure still leaves everything pending.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fake_providers import FakeEmbeddingProvider
from memory_contracts.fake_vector_store import InMemoryVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, EmbeddingState, WriteOrigin
from memory_core.domain.errors import ProviderResponseError, ProviderUnavailable
from memory_core.ports.providers import EmbeddingPurpose
from memory_core.services.memory import CheckStatus
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.vectors.drain_batch import DrainReport
from memory_core.services.vectors.index import VectorIndex
from memory_core.settings import MemorySettings

AGENT = "agent-a"
POISON = "the provider refuses this one"


class RejectingEmbedder(FakeEmbeddingProvider):
    """Answers HTTP 400 (ProviderResponseError) to any request that holds the poison text."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        if any(POISON in text for text in texts):
            raise self.error
        return await super().embed(texts, purpose=purpose, deadline=deadline, cancel=cancel)


def _world(error: Exception) -> tuple[InMemoryClaimStore, VectorIndex, list[str]]:
    clock = ManualClock()
    store = InMemoryClaimStore(clock=clock)
    settings = MemorySettings(embedding_batch_size=4)
    gateway = ProviderGateway(clock=clock, embedder=RejectingEmbedder(error), settings=settings)
    index = VectorIndex(
        store=store, vectors=InMemoryVectorStore(), gateway=gateway, domain_clock=clock
    )
    ids = []
    for n in range(13):
        content = POISON if n == 7 else f"the user likes colour number {n}"
        outcome = store.insert(
            ClaimDraft(agent_id=AGENT, kind="semantic", content=content),
            origin=WriteOrigin.USER_ADD,
            now=clock.now(),
        )
        assert outcome.claim is not None
        ids.append(outcome.claim.id)
    return store, index, ids


def _drain(index: VectorIndex) -> DrainReport:
    deadline = Deadline.after(ManualClock(), 30.0)
    return asyncio.run(index.drain(AGENT, deadline=deadline, cancel=CancellationToken()))


def _states(store: InMemoryClaimStore, ids: list[str]) -> list[EmbeddingState]:
    claims = {c.id: c for c in store.list_claims(AGENT, include_inactive=True, limit=100)}
    return [claims[i].embedding_state for i in ids]


def test_a_rejected_claim_is_isolated_and_the_rest_embed() -> None:
    """R-WRITE-6: the poison claim ends ERROR, every other claim READY, nothing pending."""
    store, index, ids = _world(ProviderResponseError("HTTP 400: bad request"))
    report = _drain(index)
    states = _states(store, ids)
    assert states[7] is EmbeddingState.ERROR
    assert [s for n, s in enumerate(states) if n != 7] == [EmbeddingState.READY] * 12
    assert store.list_pending_embeddings(AGENT, limit=100) == []
    assert report.embedded == 12
    assert report.rejected == 1
    # A second drain has nothing to do: the poison claim is not retried forever.
    assert _drain(index).embedded == 0


@pytest.mark.parametrize("error", [ProviderUnavailable("HTTP 503")])
def test_a_retryable_failure_leaves_every_claim_pending(error: Exception) -> None:
    """R-WRITE-6: only a rejection of one text alone is terminal; an outage is not."""
    store, index, ids = _world(error)
    report = _drain(index)
    assert report.failed
    assert EmbeddingState.ERROR not in _states(store, ids)
    assert len(store.list_pending_embeddings(AGENT, limit=100)) == len(ids)


def test_doctor_counts_the_refused_claim(tmp_path: Path) -> None:
    """R-WRITE-6: doctor reports the terminally failed claim (a count, no content)."""
    from memory_plugins.api import open_memory

    async def go() -> None:
        embedder = RejectingEmbedder(ProviderResponseError("HTTP 400: bad request"))
        memory = open_memory(
            tmp_path / "data", clock=ManualClock(), overrides={"embedding_provider": embedder}
        )
        await memory.remember(AGENT, "The user keeps bees on the roof.")
        await memory.remember(AGENT, f"The user said {POISON}.")
        await memory.reindex(AGENT)
        (agent,) = (await memory.diagnose([AGENT])).agents
        assert (agent.embedding_errors, agent.pending_embeddings, agent.ready_claims) == (1, 0, 1)
        (check,) = [c for c in (await memory.diagnose([AGENT])).checks if AGENT in c.name]
        assert check.status is CheckStatus.WARN and "1 refused" in check.detail
        assert POISON not in check.detail
        await memory.aclose()

    asyncio.run(go())
