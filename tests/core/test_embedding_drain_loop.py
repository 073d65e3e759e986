"""The coalesced embedding drain (issue 15): commits mark, one loop embeds in batches across
turns and agents — one model call, one state transaction per batch, each batch recorded while
the next one's model call runs — and neither a close nor a delete while queued or in flight
loses a claim or leaves a vector behind (R-WRITE-6, R-VEC-4, R-FORGET-1)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

import pytest

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fake_providers import STALL, FakeEmbeddingProvider
from memory_contracts.fake_vector_store import InMemoryVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, EmbeddingIdentity, EmbeddingState, WriteOrigin
from memory_core.domain.errors import ProviderResponseError, StoreError
from memory_core.ports.claims import EmbeddingMark
from memory_core.ports.providers import EmbeddingPurpose
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.vectors.drain_loop import DrainLoop, DrainTunables
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.fences import AgentLocks
from memory_core.settings import MemorySettings

A, B = "agent-a", "agent-b"
POISON = "the provider refuses this text"


class CountingStore(InMemoryClaimStore):
    """Counts the state transactions the drain makes; a per-claim mark fails the test."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(clock=clock)
        self.batches: list[int] = []
        self.single_marks = 0
        self.events: list[str] = []  # "call" and "mark", in the order they happened

    def mark_embeddings(self, marks: Sequence[EmbeddingMark], *, now: datetime) -> Sequence[bool]:
        self.batches.append(len(marks))
        self.events.append("mark")
        single, result = self.single_marks, super().mark_embeddings(marks, now=now)
        self.single_marks = single  # the fake's batch is made of single marks: not counted
        return result

    def mark_embedding(self, agent_id: str, claim_id: str, **kwargs: object) -> bool:
        self.single_marks += 1
        return super().mark_embedding(agent_id, claim_id, **kwargs)  # type: ignore[arg-type]


class PoisonEmbedder(FakeEmbeddingProvider):
    """Refuses any request holding POISON; runs `during_call` (once) while a call is out.
    With `events`, each batch call is logged and waits on the loop a moment, as a model
    call waits on its thread, so what the drain does meanwhile is seen."""

    during_call: Callable[[], None] | None = None
    events: list[str] | None = None

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        if any(POISON in text for text in texts):
            raise ProviderResponseError("HTTP 400: bad request")
        if self.events is not None and purpose is EmbeddingPurpose.BATCH:
            self.events.append("call")
            await asyncio.sleep(0.01)
        if self.during_call is not None:
            during, self.during_call = self.during_call, None
            during()
        return await super().embed(texts, purpose=purpose, deadline=deadline, cancel=cancel)


class WorkerVectors(InMemoryVectorStore):
    """Writes yield to the loop, as the DuckDB store's worker thread does; `fail_upserts`
    of them fail first."""

    fail_upserts = 0

    async def upsert(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        vectors: Mapping[str, Sequence[float]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        await asyncio.sleep(0.005)
        if self.fail_upserts:
            self.fail_upserts -= 1
            raise StoreError("vector store write failed")
        await super().upsert(agent_id, identity, vectors, deadline=deadline, cancel=cancel)


class World:
    def __init__(
        self,
        *,
        batch_size: int = 100,
        delay_seconds: float = 0.05,
        store: CountingStore | None = None,
        vectors: WorkerVectors | None = None,
    ) -> None:
        self.clock = ManualClock()
        self.store = store or CountingStore(self.clock)
        self.vectors = vectors or WorkerVectors()
        self.embedder = PoisonEmbedder()
        self.embedder.events = self.store.events
        scheduler = AsyncioScheduler()
        gateway = ProviderGateway(
            clock=self.clock, embedder=self.embedder, settings=MemorySettings()
        )
        self.index = VectorIndex(
            store=self.store,
            vectors=self.vectors,
            gateway=gateway,
            domain_clock=self.clock,
            locks=AgentLocks(scheduler),
            scheduler=scheduler,
            infra_clock=self.clock,
        )
        self.loop = DrainLoop(
            index=self.index,
            scheduler=scheduler,
            infra_clock=self.clock,
            tunables=DrainTunables(
                batch_size=batch_size,
                delay_seconds=delay_seconds,
                pass_seconds=30.0,
            ),
        )

    def commit(self, agent_id: str, *contents: str) -> list[str]:
        """Claims stored as one ingestion commit stores them, and the commit's mark."""
        ids = []
        for content in contents:
            outcome = self.store.insert(
                ClaimDraft(agent_id=agent_id, kind="semantic", content=content),
                origin=WriteOrigin.EXTRACTION,
                now=self.clock.now(),
            )
            assert outcome.claim is not None
            ids.append(outcome.claim.id)
        self.loop.mark(agent_id, len(ids))
        return ids

    def state(self, agent_id: str, claim_id: str) -> EmbeddingState:
        return self.store.get(agent_id, claim_id).embedding_state

    async def vector_ids(self, agent_id: str) -> Sequence[str]:
        return await self.vectors.list_ids(
            agent_id, deadline=Deadline.after(self.clock, 5.0), cancel=CancellationToken()
        )

    def batch_calls(self) -> list[int]:
        return [len(c.texts) for c in self.embedder.calls if c.purpose is EmbeddingPurpose.BATCH]

    def cleanups_owed(self, agent_id: str) -> int:
        return len(self.store.pending_vector_cleanups(agent_id, limit=100))

    async def certified(self) -> None:
        """A first claim embedded, so the agent holds its certificate: no warm-up after a
        batch sweeps an orphan up, and what a test sees is the batches' own doing."""
        self.commit(A, "the user grows tomatoes")
        await self.loop.settle()
        assert self.index.certificate(A) is not None
        self.store.events.clear()


def test_commits_of_several_turns_and_agents_share_one_model_call_and_one_transaction() -> None:
    """R-VEC-4: five commits of two agents become one batch: one model call, one vector
    write per agent, one state transaction, every claim READY with a vector."""

    async def go() -> None:
        world = World()
        ids = {A: [], B: []}
        for turn in range(3):
            ids[A] += world.commit(A, f"agent a fact {turn}", f"agent a detail {turn}")
        for turn in range(2):
            ids[B] += world.commit(B, f"agent b fact {turn}")
        assert world.loop.marked == 8
        await world.loop.settle()
        assert world.batch_calls() == [8]
        assert (world.store.batches, world.store.single_marks) == ([8], 0)
        for agent, claim_ids in ids.items():
            assert {world.state(agent, i) for i in claim_ids} == {EmbeddingState.READY}
            assert sorted(await world.vector_ids(agent)) == sorted(claim_ids)
        assert world.index.certificate(A) is not None  # a new agent is certified at once

    asyncio.run(go())


def test_a_full_batch_starts_without_waiting_for_the_delay() -> None:
    """R-WRITE-1: the delay bounds the wait for a batch to fill; a full one goes at once,
    and what did not fit is taken by the next batch, again without waiting."""

    async def go() -> None:
        world = World(batch_size=3, delay_seconds=60.0)
        ids = world.commit(A, *(f"fact number {n}" for n in range(5)))
        for _ in range(500):  # 5 s at most, against a 60 s delay
            if all(world.state(A, i) is EmbeddingState.READY for i in ids):
                break
            await asyncio.sleep(0.01)
        assert world.batch_calls() == [3, 2]
        assert world.store.batches == [3, 2]

    asyncio.run(go())


def test_a_claim_deleted_while_queued_gets_no_vector() -> None:
    """R-FORGET-1, R-VEC-4: deleted between its commit and its batch, a claim is never
    embedded and no vector of it exists; its neighbours are embedded."""

    async def go() -> None:
        world = World()
        kept, gone = world.commit(A, "the user keeps bees", "the user sold the boat")
        world.store.delete(A, gone, now=world.clock.now())
        await world.loop.settle()
        assert await world.vector_ids(A) == [kept]
        assert all(gone not in call.texts for call in world.embedder.calls)

    asyncio.run(go())


def test_a_claim_deleted_during_its_model_call_keeps_no_vector() -> None:
    """R-FORGET-1, R-WRITE-6: the delete commits while the batch's model call is out; the
    batch's CAS on that claim loses, and the vector it wrote is deleted again."""

    async def go() -> None:
        world = World()
        (first,) = world.commit(A, "the user grows tomatoes")
        await world.loop.settle()
        # Certified already: no warm-up follows the batch to sweep an orphan up after it.
        assert world.index.certificate(A) is not None
        kept, gone = world.commit(A, "the user keeps bees", "the user sold the boat")
        world.embedder.during_call = lambda: world.store.delete(A, gone, now=world.clock.now())
        await world.loop.settle()
        assert sorted(await world.vector_ids(A)) == sorted([first, kept])
        assert world.state(A, kept) is EmbeddingState.READY

    asyncio.run(go())


def test_a_poison_claim_in_a_coalesced_batch_is_isolated() -> None:
    """R-WRITE-6: the provider refusing one text of a batch of two agents' claims marks that
    claim ERROR (content-free) and every other claim READY, in one transaction."""

    async def go() -> None:
        world = World()
        good = world.commit(A, "fact one", f"said {POISON}", "fact two")
        theirs = world.commit(B, "their fact")
        await world.loop.settle()
        assert [world.state(A, i) for i in good] == [
            EmbeddingState.READY, EmbeddingState.ERROR, EmbeddingState.READY,
        ]  # fmt: skip
        assert world.state(B, theirs[0]) is EmbeddingState.READY
        assert world.store.batches == [4]

    asyncio.run(go())


@pytest.mark.parametrize("in_flight", [False, True], ids=["marked", "in-flight"])
def test_close_loses_nothing_the_next_loop_embeds_what_was_left(in_flight: bool) -> None:
    """R-WRITE-6: closing cancels the batch in flight and drops the marks, but the rows stay
    pending; a new loop over the same store (a reopen) embeds them."""

    async def go() -> None:
        world = World(delay_seconds=0.0 if in_flight else 60.0)
        if in_flight:
            world.embedder.fail_next(STALL)  # the batch hangs until its token ends it
        ids = world.commit(A, "fact one", "fact two")
        if in_flight:
            while not world.embedder.calls:
                await asyncio.sleep(0.01)
        world.loop.close()
        await world.loop.settle()
        assert [world.state(A, i) for i in ids] == [EmbeddingState.PENDING] * 2
        world.loop.mark(A, 2)  # refused: closed
        assert world.loop.marked == 0

        reopened = World(store=world.store)
        reopened.loop.mark(A, 2)
        await reopened.loop.settle()
        assert [world.state(A, i) for i in ids] == [EmbeddingState.READY] * 2

    asyncio.run(go())


def test_the_next_batch_is_called_while_the_previous_one_is_recorded() -> None:
    """R-VEC-4, R-WRITE-6: batches of one commit go back to back, the next one's model call
    launched before the previous one's vectors and states are written; every claim READY
    with its vector, one state transaction per batch, no cleanup row left."""

    async def go() -> None:
        world = World(batch_size=3)
        ids = world.commit(A, *(f"fact number {n}" for n in range(9)))
        await world.loop.settle()
        assert world.batch_calls() == [3, 3, 3]
        assert world.store.batches == [3, 3, 3]
        assert world.store.events[:3] == ["call", "call", "mark"]
        assert {world.state(A, i) for i in ids} == {EmbeddingState.READY}
        assert sorted(await world.vector_ids(A)) == sorted(ids)
        assert world.cleanups_owed(A) == 0

    asyncio.run(go())


def test_a_claim_forgotten_during_the_next_batchs_call_keeps_no_vector() -> None:
    """R-FORGET-1, R-WRITE-6: the delete commits while the second batch's model call runs
    beside the first batch's record; that batch's CAS on the claim loses and its vector is
    deleted again, its neighbours are READY, and no cleanup is owed."""

    async def go() -> None:
        world = World(batch_size=2)
        await world.certified()
        first = world.commit(A, "fact one", "fact two")
        kept, gone = world.commit(A, "the user keeps bees", "the user sold the boat")
        calls = 0

        def count_and_delete() -> None:
            nonlocal calls
            calls += 1
            if calls == 2:
                world.store.delete(A, gone, now=world.clock.now())
            else:
                world.embedder.during_call = count_and_delete

        world.embedder.during_call = count_and_delete
        await world.loop.settle()
        assert world.store.events[:3] == ["call", "call", "mark"]  # the delete was in flight
        assert gone not in await world.vector_ids(A)
        assert {world.state(A, i) for i in [*first, kept]} == {EmbeddingState.READY}
        assert world.cleanups_owed(A) == 0

    asyncio.run(go())


def test_a_failing_vector_write_with_the_next_batch_in_flight_loses_nothing() -> None:
    """R-VEC-4, R-FORGET-1: the first batch's vector write fails while the second batch's
    call is out; the second lands READY, the first's claims stay pending with their cleanup
    rows owed (never READY without a vector), and the next pass embeds them and settles
    every row. A store that keeps failing is not retried hot: the run stops."""

    async def go() -> None:
        world = World(batch_size=2)
        await world.certified()
        world.vectors.fail_upserts = 1
        failed = world.commit(A, "fact one", "fact two")
        landed = world.commit(A, "fact three", "fact four")
        await world.loop.settle()
        assert {world.state(A, i) for i in landed} == {EmbeddingState.READY}
        ready = {i for i in failed if world.state(A, i) is EmbeddingState.READY}
        assert ready <= set(await world.vector_ids(A))
        world.commit(A, "fact five")
        await world.loop.settle()
        assert {world.state(A, i) for i in failed} == {EmbeddingState.READY}
        assert set(await world.vector_ids(A)) >= {*failed, *landed}
        assert world.cleanups_owed(A) == 0

        world.vectors.fail_upserts = 1_000
        calls = len(world.batch_calls())
        world.commit(A, *(f"more {n}" for n in range(6)))
        await asyncio.wait_for(world.loop.settle(), timeout=5.0)
        assert len(world.batch_calls()) - calls <= 3  # the run gave up, rows stay pending
        assert world.cleanups_owed(A) > 0

    asyncio.run(go())


def test_close_with_two_batches_in_the_air_returns_and_loses_nothing() -> None:
    """R-WRITE-6, R-HOST-1: closed while the second batch's call hangs (the first being
    recorded beside it), the loop's settle returns at once, nothing pending is lost and no
    lock stays held; a new loop over the same store embeds what was left."""

    async def go() -> None:
        world = World(batch_size=2)
        await world.certified()
        world.embedder.fail_next(None, STALL)  # the second batch's call hangs
        ids = world.commit(A, "fact one", "fact two", "fact three", "fact four")
        while len(world.batch_calls()) < 3:  # the certifying call, then two batches
            await asyncio.sleep(0.01)
        world.loop.close()
        await asyncio.wait_for(world.loop.settle(), timeout=5.0)
        assert [world.state(A, i) for i in ids[2:]] == [EmbeddingState.PENDING] * 2
        await asyncio.wait_for(world.index.warm(A, **calls()), timeout=5.0)  # lock free

        reopened = World(store=world.store, vectors=world.vectors)
        reopened.loop.mark(A, 4)
        await reopened.loop.settle()
        assert {world.state(A, i) for i in ids} == {EmbeddingState.READY}

    asyncio.run(go())


def calls() -> dict[str, object]:
    return {"deadline": Deadline.after(ManualClock(), 5.0), "cancel": CancellationToken()}


def test_a_batch_certifies_its_agent_without_waking_a_model_that_just_answered() -> None:
    """R-VEC-4: the agents of a first batch are certified with the identity the batch was
    embedded with; the embedder is warmed only while its query latency is unmeasured (the
    warm-up feeds the query deadline), not once per new agent (issue 15)."""

    async def go() -> None:
        world = World()

        def warm_calls() -> int:
            return sum(1 for c in world.embedder.calls if c.purpose is EmbeddingPurpose.WARM)

        world.commit(A, "agent a fact")
        await world.loop.settle()
        assert world.index.certificate(A) is not None
        assert warm_calls() == 1  # nothing measured yet: warmed once
        world.commit(B, "agent b fact")
        await world.loop.settle()
        assert world.index.certificate(B) is not None
        assert warm_calls() == 1  # measured by A's warm-up: B's batch is enough
        assert world.batch_calls() == [1, 1]

    asyncio.run(go())
