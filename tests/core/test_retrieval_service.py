"""The retrieval service over fakes that pass the same contracts as the real adapters."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from datetime import timedelta

from memory_adapters.offload import InlineCalls
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fake_vector_store import InMemoryVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.errors import DeadlineExceeded
from memory_core.domain.manifest import Degradation, DropReason
from memory_core.domain.scope import Scope, ScopeContext
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.ports.providers import EmbeddingPurpose
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.read.retrieval.service import (
    RetrievalOutcome,
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalService,
)
from memory_core.services.vectors.index import VectorIndex
from memory_core.settings import MemorySettings

A, B = "agent-a", "agent-b"


class TableEmbedder:
    """Vectors chosen by the test: texts containing a key word map to that word's axis."""

    provider_id = "table"
    model_id = "axes-v1"
    dim = 8

    def __init__(self, axes: dict[str, int], *, fail: BaseException | None = None) -> None:
        self.axes = axes
        self.fail = fail
        self.queries = 0

    def vector(self, text: str) -> list[float]:
        values = [0.0] * self.dim
        for word, axis in self.axes.items():
            if word in text.lower():
                values[axis] += 1.0
        if not any(values):
            values[self.dim - 1] = 1.0
        norm = math.sqrt(sum(v * v for v in values))
        return [v / norm for v in values]

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        return self.dim

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        if purpose is EmbeddingPurpose.QUERY:
            self.queries += 1
            if self.fail is not None:
                raise self.fail
        return [self.vector(text) for text in texts]

    async def aclose(self) -> None:
        return None


class World:
    def __init__(self, *, embedder: TableEmbedder | None = None, **settings: object) -> None:
        self.clock = ManualClock()
        self.settings = MemorySettings(**settings)  # type: ignore[arg-type]
        self.store = InMemoryClaimStore(clock=self.clock)
        self.vectors = InMemoryVectorStore()
        self.gateway = ProviderGateway(clock=self.clock, embedder=embedder, settings=self.settings)
        self.index = VectorIndex(
            store=self.store, vectors=self.vectors, gateway=self.gateway, domain_clock=self.clock
        )
        self.service = RetrievalService(
            store=self.store,
            domain_clock=self.clock,
            infra_clock=self.clock,
            calls=InlineCalls(),
            index=self.index,
            gateway=self.gateway,
            settings=self.settings,
        )

    def add(self, content: str, *, agent: str = A, **fields: object) -> str:
        outcome = self.store.insert(
            ClaimDraft(
                agent_id=agent, kind=fields.pop("kind", "semantic"), content=content, **fields
            ),  # type: ignore[arg-type]
            origin=WriteOrigin.USER_ADD,
            now=self.clock.now(),
        )
        assert outcome.claim is not None
        return outcome.claim.id

    def run(self, coroutine):  # type: ignore[no-untyped-def]
        return asyncio.run(coroutine)

    def deadline(self, seconds: float = 5.0) -> Deadline:
        return Deadline.after(self.clock, seconds)

    def retrieve(self, query: str, **fields: object):  # type: ignore[no-untyped-def]
        request = RetrievalRequest(agent_id=fields.pop("agent", A), query=query, **fields)  # type: ignore[arg-type]
        return self.run(
            self.service.retrieve(request, deadline=self.deadline(), cancel=CancellationToken())
        )

    def warm_and_embed(self, agent: str = A) -> None:
        async def go() -> None:
            await self.index.drain(agent, deadline=self.deadline(), cancel=CancellationToken())
            assert await self.index.warm(
                agent, deadline=self.deadline(), cancel=CancellationToken()
            )

        self.run(go())


def _ids(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [item.claim.id for item in result.items]


def test_fts_recall_returns_only_the_owners_rows() -> None:
    """R-READ-3, R-PRIV-2: identical text of another agent is never a candidate."""
    world = World()
    mine = world.add("Project Atlas retention policy is thirty days")
    world.add("Project Atlas retention policy is thirty days", agent=B, importance=0.99)
    result = world.retrieve("Atlas retention policy")
    assert _ids(result) == [mine]
    assert result.diagnostics.outcome is RetrievalOutcome.COMPLETED


def test_a_session_scoped_claim_needs_the_session_in_context() -> None:
    """R-SCOPE-1: missing narrow context never widens recall."""
    world = World()
    scoped = world.add("Draft notes mention the Kestrel codename", scope=Scope.session("s1"))
    assert world.retrieve("Kestrel codename").items == ()
    assert world.retrieve("Kestrel codename", context=ScopeContext(session_id="s2")).items == ()
    found = world.retrieve("Kestrel codename", context=ScopeContext(session_id="s1"))
    assert _ids(found) == [scoped]


def test_suppressed_topics_are_dropped_before_access_accounting() -> None:
    """R-DIR-2: a suppress_topic directive filters candidates before they are counted."""
    world = World()
    hidden = world.add("The user's divorce lawyer is in Lyon")
    shown = world.add("The user's tax lawyer is in Paris")
    world.store.create_directive(
        A,
        DirectiveKind.SUPPRESS_TOPIC,
        "Stop mentioning my divorce",
        topic="divorce",
        now=world.clock.now(),
    )
    result = world.retrieve("lawyer", purpose=RetrievalPurpose.RECALL)
    assert _ids(result) == [shown]
    assert any(d.id == hidden and d.reason is DropReason.SUPPRESSED for d in result.dropped)
    assert world.store.get(A, hidden).access_count == 0
    assert world.store.get(A, shown).access_count == 1


def test_injection_does_not_count_access_itself() -> None:
    """R-READ-7: for injection the runtime counts only what entered the prompt."""
    world = World()
    claim = world.add("The user drinks oat milk")
    world.retrieve("oat milk", purpose=RetrievalPurpose.INJECTION)
    assert world.store.get(A, claim).access_count == 0


def test_expired_confident_states_leave_current_recall_but_not_evidence() -> None:
    """R-TIME-3: a time filter is never a physical delete."""
    world = World()
    now = world.clock.now()
    expired = world.add(
        "The user's office is in Paris",
        temporal=TemporalMetadata(
            kind="state",
            interval=Interval(
                valid_from=now - timedelta(days=400), valid_until=now - timedelta(days=30)
            ),
            precision="day",
            timezone="Europe/Paris",
            confidence=0.95,
        ),
    )
    current = world.add("The user's office is in Berlin")
    recall = world.retrieve("office")
    assert _ids(recall) == [current]
    assert any(d.id == expired and d.reason is DropReason.TEMPORAL for d in recall.dropped)
    evidence = world.retrieve("office", purpose=RetrievalPurpose.DECISION)
    assert set(_ids(evidence)) == {expired, current}


def test_vector_hits_are_revalidated_against_the_authoritative_row() -> None:
    """R-READ-3: an archived claim whose vector is still stored never reaches ranking."""
    embedder = TableEmbedder({"sushi": 0, "ramen": 1})
    world = World(embedder=embedder)
    sushi = world.add("Favourite dinner: sushi")
    ramen = world.add("Lunch was ramen twice")
    world.warm_and_embed()
    # No shared term with either claim: only the vector path can find them.
    result = world.retrieve("I crave sushi and ramen")
    assert set(_ids(result)) == {sushi, ramen}
    world.store.archive(A, ramen, now=world.clock.now())
    result = world.retrieve("I crave sushi and ramen")
    assert _ids(result) == [sushi]


def test_a_cold_agent_records_vector_cold_and_answers_from_fts() -> None:
    """R-VEC-4: without a ready certificate the vector path is skipped, never guessed."""
    world = World(embedder=TableEmbedder({"sushi": 0}))
    claim = world.add("Favourite dinner: sushi")
    result = world.retrieve("sushi")
    assert _ids(result) == [claim]
    assert Degradation.VECTOR_COLD in result.degradations


def test_an_embedding_failure_degrades_to_fts_results() -> None:
    """R-PROV-1: a query-embedding deadline miss is recorded as embeddingTimeout."""
    embedder = TableEmbedder({"sushi": 0})
    world = World(embedder=embedder)
    claim = world.add("Favourite dinner: sushi")
    world.warm_and_embed()
    embedder.fail = DeadlineExceeded("slow provider")
    result = world.retrieve("sushi tonight")
    assert _ids(result) == [claim]
    assert Degradation.EMBEDDING_TIMEOUT in result.degradations


def test_refill_stops_at_the_cap_and_says_so() -> None:
    """R-READ-4: filtering that starves top-K refills geometrically up to the cap, then
    records candidateBudgetExhausted instead of looping."""
    world = World(top_k=2, candidate_cap_per_source=16)
    world.store.create_directive(
        A,
        DirectiveKind.SUPPRESS_TOPIC,
        "never mention secrets",
        topic="classified",
        now=world.clock.now(),
    )
    for i in range(40):
        world.add(f"Garden note {i}: classified compost recipe")
    result = world.retrieve("garden compost")
    assert result.items == ()
    assert Degradation.CANDIDATE_BUDGET_EXHAUSTED in result.degradations
    assert result.diagnostics.refills >= 1
    assert result.diagnostics.fts_candidates <= 16


def test_a_pending_clear_fences_retrieval() -> None:
    """R-FORGET-3: while a clear job exists, nothing of the agent is readable."""
    world = World()
    world.add("Something to forget about gardening")
    world.store.begin_clear(A, now=world.clock.now())
    result = world.retrieve("gardening")
    assert result.items == ()
    assert result.diagnostics.outcome is RetrievalOutcome.FENCED


def test_diagnostics_hold_no_text() -> None:
    """R-FORGET-1: diagnostics carry counts and timings, never query or claim text."""
    world = World()
    world.add("Marker zqxvbwkjhgfd lives here")
    result = world.retrieve("zqxvbwkjhgfd")
    assert "zqxvbwkjhgfd" not in repr(result.diagnostics)
    assert "zqxvbwkjhgfd" not in result.query_hash


def test_warm_up_and_an_embedding_pass_never_interleave() -> None:
    """R-VEC-4: a warm-up takes the ready ids, then checks coverage; an embedding pass landing
    in between would have its fresh vectors deleted as orphans. The per-agent lock keeps the
    two apart, so every ready claim keeps its vector."""
    from memory_adapters.asyncio_scheduler import AsyncioScheduler
    from memory_core.services.write.fences import AgentLocks

    world = World(embedder=TableEmbedder({"sushi": 0}))
    for i in range(3):
        world.add(f"Sushi place number {i}")
    gate = asyncio.Event()
    inner_warm = world.vectors.warm

    async def gated_warm(*args, **kwargs):  # type: ignore[no-untyped-def]
        await gate.wait()  # the ready ids were read before this point
        return await inner_warm(*args, **kwargs)

    world.vectors.warm = gated_warm  # type: ignore[method-assign]

    async def scenario() -> None:
        world.index = VectorIndex(
            store=world.store,
            vectors=world.vectors,
            gateway=world.gateway,
            domain_clock=world.clock,
            locks=AgentLocks(AsyncioScheduler()),
        )
        warming = asyncio.create_task(
            world.index.warm(A, deadline=world.deadline(), cancel=CancellationToken())
        )
        await asyncio.sleep(0)
        draining = asyncio.create_task(
            world.index.drain(A, deadline=world.deadline(), cancel=CancellationToken())
        )
        await asyncio.sleep(0.01)
        gate.set()
        await asyncio.gather(warming, draining)
        stored = await world.vectors.list_ids(
            A, deadline=world.deadline(), cancel=CancellationToken()
        )
        certificate = world.index.certificate(A)
        assert certificate is not None
        ready = world.store.list_ready_ids(A, certificate.identity)
        assert sorted(stored) == sorted(ready)
        assert len(ready) == 3

    world.run(scenario())


def test_short_words_the_trigram_index_cannot_see_still_decide_the_rank() -> None:
    """R-READ-8: rows differing only in a number ("policy 2" vs "policy 12") are told apart by
    whole-word coverage of the query, not left to importance or a random id."""
    world = World()
    for n in (1, 2, 3, 12, 20):
        world.add(
            f"Project Atlas retention policy {n} is enabled.", importance=0.9 if n != 2 else 0.2
        )
    wanted = world.add(
        "Project Atlas retention policy 2 is enabled.", kind="episodic", importance=0.1
    )
    result = world.retrieve("Project Atlas retention policy 2", top_k=2)
    contents = [item.claim.content for item in result.items]
    assert contents == ["Project Atlas retention policy 2 is enabled."] * 2
    assert wanted in _ids(result)  # the episodic twin is kept: kinds do not collapse together


def test_cjk_queries_are_ranked_by_bigram_coverage() -> None:
    """R-READ-8: a CJK query with a trailing number prefers the row that has both."""
    world = World()
    for n in (1, 2, 3):
        world.add(f"用户偏好简洁中文回答{n}，避免冗长铺垫。", importance=0.8)
    target = world.add("用户偏好简洁中文回答10，避免冗长铺垫。", importance=0.8)
    world.add("Unrelated gardening note cjk 10 about soil.", importance=0.9)
    result = world.retrieve("偏好简洁中文回答10", top_k=1)
    assert _ids(result) == [target]
