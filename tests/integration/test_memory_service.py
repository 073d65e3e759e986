"""The memory service end to end on the embedded stores (SQLite + DuckDB files)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from memory_world import make_memory, world_config, world_registry

from memory_adapters.tapes import InMemoryTape
from memory_contracts.fake_vector_store import InMemoryVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.errors import NotFound, SecretRejected, StoreError
from memory_core.domain.scope import Scope
from memory_core.services.memory import RememberStatus
from memory_core.services.read.runtime import ContributionOutcome, place
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus

A, B = "agent-a", "agent-b"


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(coroutine)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def test_remember_then_recall_through_both_paths(tmp_path: Path, clock: ManualClock) -> None:
    """R-READ-3, R-READ-8: a stored fact is recalled for its owner only."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        stored = await memory.remember(A, "The user's favourite editor is Helix.")
        await memory.remember(B, "The user's favourite editor is Helix.")
        assert stored.status is RememberStatus.STORED
        assert await memory.warm(A)
        result = await memory.recall(A, "favourite editor")
        assert [item.claim.id for item in result.items] == [stored.claim_id]
        assert all(item.claim.agent_id == A for item in result.items)
        await memory.aclose()

    run(go())


def test_forgetting_by_delete_survives_replay_until_the_user_adds_it(
    tmp_path: Path, clock: ManualClock
) -> None:
    """R-FORGET-1, R-WRITE-5: a deleted fact offered again by the model stays forgotten; an
    explicit user add brings it back."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        first = await memory.remember(A, "Project Saffron uses Rust.")
        assert first.claim_id is not None
        assert await memory.delete(A, first.claim_id) == 3
        replay = await memory.remember(A, "  Project   Saffron uses Rust. ")
        assert replay.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION
        assert (await memory.recall(A, "Saffron")).items == ()
        back = await memory.remember(A, "Project Saffron uses Rust.", user_add=True)
        assert back.status is RememberStatus.STORED and back.reauthorized
        await memory.aclose()

    run(go())


def test_memory_forget_archives_and_says_so(tmp_path: Path, clock: ManualClock) -> None:
    """R-FORGET-2: the tool archives recoverably and its result says the row is kept."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        stored = await memory.remember(A, "The user's locker code is on a sticky note.")
        assert stored.claim_id is not None
        result = await memory.forget(A, stored.claim_id)
        assert result.archived and "restored" in result.note
        assert (await memory.recall(A, "locker")).items == ()
        await memory.restore(A, stored.claim_id)
        assert [i.claim.id for i in (await memory.recall(A, "locker")).items] == [stored.claim_id]
        await memory.aclose()

    run(go())


def test_secrets_are_refused_before_anything_is_stored(tmp_path: Path, clock: ManualClock) -> None:
    """R-PRIV-1: the shared policy refuses a credential on every write path."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        with pytest.raises(SecretRejected) as caught:
            await memory.remember(A, "my key is sk-proj-Abc123Def456Ghi789Jkl")
        assert "Abc123Def456" not in str(caught.value)
        assert memory.store.list_claims(A) == []
        await memory.aclose()

    run(go())


def test_a_turn_is_prepared_once_and_reused_on_refresh(tmp_path: Path, clock: ManualClock) -> None:
    """R-READ-7: a refresh reuses the contribution: no second retrieval, access count or
    anchor; the user's own words stay last when placed."""

    async def go() -> None:
        tape = InMemoryTape()
        memory = make_memory(tmp_path, clock, tape=tape)
        stored = await memory.remember(A, "The user prefers metric units.")
        session = memory.session(A, "s1")
        first = await session.prepare_turn("m1", "Which units do I prefer?")
        again = await session.prepare_turn("m1", "Which units do I prefer?")
        assert first.outcome is ContributionOutcome.ASSEMBLED
        assert again.outcome is ContributionOutcome.REUSED
        assert again.text == first.text and again.anchor_id == first.anchor_id
        claim = memory.store.get(A, stored.claim_id)  # type: ignore[arg-type]
        assert claim.access_count == len(first.manifest.selected)
        placed = place(first, "Which units do I prefer?")
        assert placed.endswith("\n\nWhich units do I prefer?")
        assert placed.startswith(first.text or "")
        await memory.aclose()

    run(go())


def test_directives_are_a_separate_plane_and_only_active_ones_are_placed(
    tmp_path: Path, clock: ManualClock
) -> None:
    """R-DIR-1, R-READ-6: a suggestion is a draft and never placed; an approved one is, in its
    own block outside the context-data container."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        draft = memory.suggest_directive(A, DirectiveKind.INSTRUCTION, "Answer in haiku.")
        assert draft is not None and draft.status is DirectiveStatus.DRAFT
        session = memory.session(A, "s1")
        before = await session.prepare_turn("m1", "hello")
        assert "haiku" not in (before.text or "")
        memory.approve_directive(A, draft.id)
        after = await session.prepare_turn("m2", "hello again")
        assert after.directive_text is not None and "haiku" in after.directive_text
        assert "haiku" not in (after.memory_text or "")
        await memory.aclose()

    run(go())


def test_clear_removes_claims_keeps_directives_and_tombstones(
    tmp_path: Path, clock: ManualClock
) -> None:
    """R-FORGET-3: claims go in batches, directives survive, replay stays suppressed."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock, clear_batch_size=4)
        ids = [
            (await memory.remember(A, f"Garden fact number {i} about tomatoes")).claim_id
            for i in range(10)
        ]
        memory.create_directive(A, DirectiveKind.INSTRUCTION, "Keep answers short.")
        seen: list[str] = []
        done = await memory.clear(A, progress=lambda job: seen.append(job.phase.value))
        assert done.removed_count == 10
        assert seen.count("claims") >= 2 and seen[-1] == "done"
        assert memory.store.list_claims(A) == []
        with pytest.raises(NotFound):
            memory.store.get(A, ids[0])  # type: ignore[arg-type]
        assert [d.content for d in memory.list_directives(A)] == ["Keep answers short."]
        replay = await memory.remember(A, "Garden fact number 3 about tomatoes")
        assert replay.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION
        await memory.aclose()

    run(go())


class _UndroppableVectors(InMemoryVectorStore):
    """A vector store whose namespace cannot be dropped (a locked file, a lost server)."""

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        raise StoreError("vector namespace locked")


def test_clear_yields_between_batches_and_defers_a_failing_vector_drop(
    tmp_path: Path, clock: ManualClock
) -> None:
    """R-FORGET-3, R-VEC-4: the one clear runner yields to the event loop after every batch;
    a vector drop that fails is deferred (orphans go at the next warm-up) and the job still
    finishes, so the agent is not left fenced."""

    async def go() -> None:
        memory = make_memory(
            tmp_path, clock, clear_batch_size=4, overrides={"vector_store": _UndroppableVectors()}
        )
        for i in range(10):
            await memory.remember(A, f"Orchard fact number {i} about pears")
        yields: list[int] = []
        original = memory._scheduler.yield_now

        async def counting_yield() -> None:
            yields.append(1)
            await original()

        memory._scheduler.yield_now = counting_yield  # type: ignore[method-assign]
        phases: list[str] = []
        done = await memory.clear(A, progress=lambda job: phases.append(job.phase.value))
        assert (done.phase.value, done.removed_count, done.vectors_dropped) == ("done", 10, False)
        assert len(yields) == 3  # 4 + 4 + 2
        assert phases == ["claims", "claims", "vectors", "done"]
        assert memory.store.pending_clears() == []
        stored = await memory.remember(A, "A new fact after the clear")
        assert stored.status is RememberStatus.STORED
        await memory.aclose()

    run(go())


def test_retire_deletes_the_whole_namespace(tmp_path: Path, clock: ManualClock) -> None:
    """R-FORGET-4: claims, directives and tombstones go; other agents are untouched."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        gone = await memory.remember(A, "Soon to be retired fact")
        kept = await memory.remember(B, "Another agent's fact")
        memory.create_directive(A, DirectiveKind.INSTRUCTION, "Be formal.")
        await memory.delete(A, gone.claim_id)  # type: ignore[arg-type]
        await memory.retire(A)
        assert memory.list_directives(A) == []
        again = await memory.remember(A, "Soon to be retired fact")
        assert again.status is RememberStatus.STORED  # tombstones went with the namespace
        assert memory.store.get(B, kept.claim_id).content == "Another agent's fact"  # type: ignore[arg-type]
        await memory.aclose()

    run(go())


def test_background_ingestion_extracts_and_a_subagent_session_never_does(
    tmp_path: Path, clock: ManualClock
) -> None:
    """R-WRITE-1, R-WRITE-2: main sessions are extracted in the background; subagents never."""

    async def go() -> None:
        tape = InMemoryTape()
        memory = make_memory(tmp_path, clock, tape=tape)
        for session_id in ("main-1", "sub-1"):
            tape.append_message(session_id, "user", "I moved to Lisbon last year.")
            tape.append_message(session_id, "assistant", "Lisbon is lovely.")
        main = memory.session(A, "main-1")
        sub = memory.session(A, "sub-1", kind="subagent")
        settled = TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)
        assert main.after_turn_settled(settled)
        assert not sub.after_turn_settled(settled)
        await main.drain()
        contents = [claim.content for claim in memory.store.list_claims(A)]
        assert contents == ["The user lives in Lisbon."]
        await memory.aclose()

    run(go())


def test_session_scoped_memories_stay_in_their_session(tmp_path: Path, clock: ManualClock) -> None:
    """R-SCOPE-1: a session-scoped memory is contributed only in that session."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        await memory.remember(
            A, "Scratch note: the staging password rotates weekly", scope=Scope.session("s1")
        )
        inside = await memory.session(A, "s1").prepare_turn("m1", "staging scratch note")
        outside = await memory.session(A, "s2").prepare_turn("m1", "staging scratch note")
        assert "Scratch note" in (inside.text or "")
        assert "Scratch note" not in (outside.text or "")
        await memory.aclose()

    run(go())


def test_opening_resumes_a_clear_a_crash_interrupted(tmp_path: Path, clock: ManualClock) -> None:
    """R-FORGET-3: a clear left half-done is finished when memory is next opened."""
    from memory_plugins.api import open_memory_async

    async def go() -> None:
        memory = make_memory(tmp_path, clock, clear_batch_size=2)
        for i in range(5):
            await memory.remember(A, f"Orchard fact {i} about pears")
        memory.store.begin_clear(A, now=clock.now())
        memory.store.run_clear_batch(A, batch_size=2)  # the "crash": one batch committed
        await memory.aclose()
        reopened = make_memory(tmp_path, clock)
        assert reopened.store.pending_clears() != []
        await reopened.aclose()
        resumed = await open_memory_async(
            tmp_path / "data", config=world_config(), clock=clock, registry=world_registry()
        )
        assert resumed.store.pending_clears() == []
        assert resumed.store.list_claims(A) == []
        replay = await resumed.remember(A, "Orchard fact 4 about pears")
        assert replay.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION
        await resumed.aclose()

    run(go())


def test_a_cold_agent_warms_itself_in_the_background(tmp_path: Path, clock: ManualClock) -> None:
    """R-VEC-4: recall on a cold agent records vectorCold and starts a warm-up, so vectors
    come back without anyone calling warm()."""
    from memory_core.domain.manifest import Degradation

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        await memory.remember(A, "The user's bicycle is a green Brompton.")
        cold = await memory.recall(A, "bicycle")
        assert Degradation.VECTOR_COLD in cold.degradations
        await memory.index.settle()
        warm = await memory.recall(A, "bicycle")
        assert Degradation.VECTOR_COLD not in warm.degradations
        assert memory.index.certificate(A) is not None
        await memory.aclose()

    run(go())


MARKER = "zqxvbwkjhgfd"  # no trigram of it is hex-only or in the other text below
MARKER_TRIGRAMS = {MARKER[i : i + 3] for i in range(len(MARKER) - 2)}


def _claim_store_trigrams(data_dir: Path) -> set[str]:
    """The marker's trigrams in the claim store's files (main file, WAL, SHM)."""
    blobs = [path.read_bytes() for path in data_dir.glob("memory.sqlite3*")]
    return {gram for gram in MARKER_TRIGRAMS if any(gram.encode() in blob for blob in blobs)}


def test_delete_and_clear_make_forgetting_physical_before_any_close(
    tmp_path: Path, clock: ManualClock
) -> None:
    """R-PRIV-3, R-FORGET-1, R-FORGET-3: the service checkpoints the claim store after a
    delete and after a clear, so the forgotten text's index trigrams leave its files while
    the service is still open."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        data = tmp_path / "data"
        kept = await memory.remember(A, "The user's favourite editor is Helix.")
        stored = await memory.remember(A, f"The gym locker code is {MARKER}.")
        assert stored.claim_id is not None
        assert _claim_store_trigrams(data) == MARKER_TRIGRAMS
        await memory.delete(A, stored.claim_id)
        assert _claim_store_trigrams(data) == set()
        await memory.remember(B, f"The bike lock code is {MARKER}.")
        assert _claim_store_trigrams(data) == MARKER_TRIGRAMS
        await memory.clear(B)
        assert _claim_store_trigrams(data) == set()
        assert [item.claim.id for item in (await memory.recall(A, "editor")).items] == [
            kept.claim_id
        ]
        await memory.aclose()

    run(go())
