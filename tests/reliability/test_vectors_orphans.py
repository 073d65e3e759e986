"""A claim forgotten while its embedding is in flight keeps no vector, whatever interleaves
(R-FORGET-1, R-VEC-2, R-VEC-3, R-VEC-4).

The 900 s turn soak ended with four agents holding one orphan vector each: a vector whose
claim was gone. Each case below drives one interleaving of a delete (or a clear) with the
embedding batch through the service: a gated embedder holds the batch's model call, a
vector store double cuts the calls a deadline would cut, and the claim store's marks fail
where SQLite's write lock would make them fail. After the interleaving, a later pass (the
agent's next drain) must leave no vector of the forgotten claim; before it, doctor reports
the cleanup still owed. The kill case reopens the data directory: the host's open finishes
what the killed process left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from pathlib import Path

import pytest

from memory_contracts.fake_providers import FakeEmbeddingProvider
from memory_contracts.fake_vector_store import InMemoryVectorStore, Namespace
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import DeadlineExceeded, StoreError
from memory_core.ports.providers import EmbeddingPurpose
from memory_core.services.memory import MemoryService
from memory_plugins.bootstrap import open_memory

AGENT, OTHER = "agent-orphans", "agent-other"
FACT = "The user keeps bees on the roof of the garage."


class GatedEmbedder(FakeEmbeddingProvider):
    """Holds the first armed batch call until `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        if self.armed and purpose is EmbeddingPurpose.BATCH:
            self.armed = False
            self.entered.set()
            await self.release.wait()
        return await super().embed(texts, purpose=purpose, deadline=deadline, cancel=cancel)


class Killed(BaseException):
    """The process dies here: nothing after it runs (not an Exception: nothing catches it)."""


class CuttingVectors(InMemoryVectorStore):
    """Runs `after_upsert` once after a write; cuts the next `cut_deletes` deletes and
    `cut_drops` drops as an expired deadline would."""

    def __init__(self, backing: dict[str, Namespace]) -> None:
        super().__init__(backing)
        self.after_upsert: Callable[[], Awaitable[None]] | None = None
        self.cut_deletes = 0
        self.cut_drops = 0

    async def upsert(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        vectors: Mapping[str, Sequence[float]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        await super().upsert(agent_id, identity, vectors, deadline=deadline, cancel=cancel)
        hook, self.after_upsert = self.after_upsert, None
        if hook is not None:
            await hook()

    async def delete(
        self,
        agent_id: str,
        claim_ids: Collection[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        if self.cut_deletes:
            self.cut_deletes -= 1
            raise DeadlineExceeded("vector store call delete exceeded its deadline")
        return await super().delete(agent_id, claim_ids, deadline=deadline, cancel=cancel)

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        if self.cut_drops:
            self.cut_drops -= 1
            raise DeadlineExceeded("vector store call drop exceeded its deadline")
        await super().drop_agent(agent_id, deadline=deadline, cancel=cancel)


class World:
    def __init__(self, root: Path, backing: dict[str, Namespace] | None = None) -> None:
        self.backing: dict[str, Namespace] = {} if backing is None else backing
        self.embedder = GatedEmbedder()
        self.vectors = CuttingVectors(self.backing)
        self.memory: MemoryService = open_memory(
            root,
            clock=ManualClock(),
            overrides={"embedding_provider": self.embedder, "vector_store": self.vectors},
        )

    def stored(self, agent_id: str = AGENT) -> set[str]:
        namespace = self.backing.get(agent_id)
        return set() if namespace is None else set(namespace.vectors)

    async def settled(self) -> None:
        """Until the background embedding the writes scheduled has finished."""
        for handle in list(self.memory._background):
            await handle.wait()
        await self.memory.embedding_drain.settle()

    async def remember(self, text: str = FACT, agent_id: str = AGENT) -> str:
        result = await self.memory.remember(agent_id, text)
        assert result.claim is not None
        return result.claim.id

    async def in_flight(self, act: Callable[[str], Awaitable[None]]) -> str:
        """Remember a fact, run `act(claim_id)` while its batch's model call is out."""
        self.embedder.armed = True
        claim_id = await self.remember()
        await asyncio.wait_for(self.embedder.entered.wait(), 10)
        await act(claim_id)
        self.embedder.release.set()
        await self.settled()
        return claim_id

    def fail_marks(self, times: int = 1) -> None:
        """The next batch's marks fail as a busy SQLite write lock makes them fail."""
        store, real = self.memory.store, self.memory.store.mark_embeddings
        left = [times]

        def mark_embeddings(marks: object, *, now: object) -> object:
            if left[0]:
                left[0] -= 1
                raise StoreError("database is locked")
            return real(marks, now=now)  # type: ignore[arg-type]

        store.mark_embeddings = mark_embeddings  # type: ignore[method-assign]

    async def owed(self, agent_id: str = AGENT) -> int:
        (agent,) = (await self.memory.diagnose([agent_id])).agents
        return agent.vector_cleanups

    async def later_pass(self, agent_id: str = AGENT) -> None:
        await self.memory.embed_pending(agent_id)


def _delete(world: World) -> Callable[[str], Awaitable[None]]:
    async def act(claim_id: str) -> None:
        await world.memory.delete(AGENT, claim_id)

    return act


async def _during_call(world: World) -> str:
    """Deleted while the model call is out: the vector is written after the delete."""
    return await world.in_flight(_delete(world))


async def _archived_during_call(world: World) -> str:
    """`memory_forget` (an archive) while the model call is out: the mark may still win on
    the archived row, whose vector must go all the same."""

    async def act(claim_id: str) -> None:
        await world.memory.forget(AGENT, claim_id)

    return await world.in_flight(act)


async def _between_upsert_and_mark(world: World) -> str:
    async def act(claim_id: str) -> None:
        async def delete_now() -> None:
            await world.memory.delete(AGENT, claim_id)

        world.vectors.after_upsert = delete_now

    return await world.in_flight(act)


async def _after_mark(world: World) -> str:
    claim_id = await world.remember()
    await world.settled()
    assert claim_id in world.stored()
    await world.memory.delete(AGENT, claim_id)
    return claim_id


async def _marks_fail(world: World) -> str:
    """Deleted during the call, and the batch's marks fail (the claim store is busy)."""

    async def act(claim_id: str) -> None:
        await world.memory.delete(AGENT, claim_id)
        world.fail_marks()

    return await world.in_flight(act)


async def _lost_cas_cleanup_cut(world: World) -> str:
    """Deleted during the call; the batch's own cleanup of the lost CAS is cut by the
    batch's deadline between the upsert and the delete."""

    async def act(claim_id: str) -> None:
        await world.memory.delete(AGENT, claim_id)
        world.vectors.cut_deletes = 1  # the delete's own vector delete already ran

    return await world.in_flight(act)


async def _delete_cut(world: World) -> str:
    """Embedded and ready; the delete's vector delete is cut by its deadline."""
    claim_id = await world.remember()
    await world.settled()
    world.vectors.cut_deletes = 1
    await world.memory.delete(AGENT, claim_id)
    return claim_id


async def _clear_drop_cut(world: World) -> str:
    """Embedded; a clear whose vector phase (the namespace drop) is cut by its deadline."""
    claim_id = await world.remember()
    await world.settled()
    world.vectors.cut_drops = 1
    done = await world.memory.clear(AGENT)
    assert not done.vectors_dropped
    return claim_id


async def _clear_during_call(world: World) -> str:
    """A clear while the batch's model call is out, its drop cut: the batch then writes
    into the namespace the clear meant to drop."""

    async def act(claim_id: str) -> None:
        world.vectors.cut_drops = 1
        await world.memory.clear(AGENT)

    return await world.in_flight(act)


INTERLEAVINGS = {
    "deleted during the model call": (_during_call, False),
    "deleted between upsert and mark": (_between_upsert_and_mark, False),
    "archived during the model call": (_archived_during_call, False),
    "deleted after mark": (_after_mark, False),
    "deleted during the call, marks fail": (_marks_fail, True),
    "deleted during the call, the lost-CAS cleanup cut": (_lost_cas_cleanup_cut, True),
    "deleted after mark, the vector delete cut": (_delete_cut, True),
    "cleared after mark, the namespace drop cut": (_clear_drop_cut, True),
    "cleared during the call, the namespace drop cut": (_clear_during_call, True),
}


@pytest.mark.parametrize(("case", "owes"), INTERLEAVINGS.values(), ids=list(INTERLEAVINGS))
def test_a_forgotten_claim_keeps_no_vector_after_the_next_pass(
    tmp_path: Path, case: Callable[[World], Awaitable[str]], owes: bool
) -> None:
    """R-FORGET-1, R-VEC-4: the vector goes at once, or a durable cleanup is owed — doctor
    says so — and the agent's next drain finishes it; another agent's vector stays."""

    async def go() -> None:
        world = World(tmp_path / "data")
        try:
            theirs = await world.remember("The other agent's user sails on Sundays.", OTHER)
            await world.settled()
            claim_id = await case(world)
            assert (await world.owed() > 0) is owes
            await world.later_pass()
            assert claim_id not in world.stored()
            assert await world.owed() == 0
            assert world.stored(OTHER) == {theirs}
            (health,) = (await world.memory.diagnose([AGENT])).agents
            assert health.orphan_vectors == 0
        finally:
            await world.memory.aclose()

    asyncio.run(go())


def test_a_kill_between_the_upsert_and_the_marks_is_finished_by_the_next_open(
    tmp_path: Path,
) -> None:
    """R-FORGET-1, R-VEC-2: the process dies after the batch wrote the vector of a claim
    deleted meanwhile and before its marks; reopening the data directory (the host's open
    runs `resume_clears`) deletes the vector, with no read of the agent needed."""
    backing: dict[str, Namespace] = {}

    async def die() -> str:
        world = World(tmp_path / "data", backing)

        async def act(claim_id: str) -> None:
            await world.memory.delete(AGENT, claim_id)

            async def kill() -> None:
                raise Killed()

            world.vectors.after_upsert = kill

        try:
            return await world.in_flight(act)
        finally:
            await world.memory.aclose()

    claim_id = asyncio.run(die())
    assert claim_id in backing[AGENT].vectors  # the orphan the kill left

    async def reopen() -> None:
        world = World(tmp_path / "data", backing)
        try:
            await world.memory.resume_clears()
            assert claim_id not in world.stored()
            assert await world.owed() == 0
        finally:
            await world.memory.aclose()

    asyncio.run(reopen())
