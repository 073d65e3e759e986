"""Background maintenance on the real stores (SQLite + DuckDB, hashing embedder): the merge
user story, stop/drain with a pass stalled in a provider call, and a failing seed that
cannot starve the queue (R-MAINT-1, R-MAINT-2, R-LINEAGE-1, R-FORGET-1)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from memory_world import make_memory

from memory_contracts.fake_providers import ScriptedTextProvider
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.errors import FencedError, ProviderUnavailable
from memory_core.ports.claims import DerivationKind, InsertStatus
from memory_core.ports.providers import TextRequest
from memory_core.ports.vectors import ReadyCertificate, VectorHit, VectorStoreCold
from memory_core.services.maintenance import PassMode
from memory_core.services.memory import MemoryService

A = "agent-a"
CALLED, NAMED = "The user's cat is called Miso.", "The user's cat is named Miso."
# The hashing embedder scores these rewordings near 0.8; the local model near 0.95.
LOOSE = {"merge_similarity_threshold": 0.5}


async def _remember(memory: MemoryService, clock: ManualClock, *texts: str) -> list[str]:
    ids = []
    for text in texts:
        result = await memory.remember(A, text)
        assert result.claim is not None
        ids.append(result.claim.id)
        clock.advance(1)
    return ids


def test_two_rewordings_merge_and_forgetting_the_survivor_forgets_both(
    tmp_path: Path,
) -> None:
    """R-LINEAGE-1, R-FORGET-1, §8.4: one live claim after a no-model pass, a merge edge
    from the retired one, and deleting the survivor suppresses a replay of both texts."""
    clock = ManualClock()

    async def go() -> None:
        memory = make_memory(tmp_path, clock, **LOOSE)
        try:
            older, newer = await _remember(memory, clock, CALLED, NAMED)
            report = await memory.run_maintenance(A, heavy=True)
            assert (report.mode, report.skipped, report.merged) == (
                PassMode.CHEAP,
                "missing-model",
                1,
            )
            assert [c.id for c in memory.list_claims(A)] == [newer]
            edges = memory.store.list_derivations(A, newer)
            assert [(e.parent_id, e.child_id, e.kind) for e in edges] == [
                (older, newer, DerivationKind.MERGE)
            ]
            # Re-embedding the survivor re-dirtied it; the next pass settles it, merging nothing.
            assert [s.memory_id for s in memory.store.list_dirty(A, limit=64)] == [newer]
            again = await memory.run_maintenance(A)
            assert again.merged == 0 and memory.store.list_dirty(A, limit=64) == []
            events = [e.event for e in memory.audit_events(A)]
            assert "memory/merge" in events and "memory/maintenance" in events
            await memory.delete(A, newer)
            for text in (CALLED, NAMED):
                replay = memory.store.insert(
                    ClaimDraft(agent_id=A, kind="semantic", content=text),  # type: ignore[arg-type]
                    origin=WriteOrigin.EXTRACTION,
                    now=clock.now(),
                )
                assert replay.status is InsertStatus.SUPPRESSED, text
        finally:
            await memory.aclose()

    asyncio.run(go())


def test_a_value_change_is_not_merged_without_a_model(tmp_path: Path) -> None:
    """§8.4: the deterministic rule merges rewordings only, never a changed value."""
    clock = ManualClock()

    async def go() -> None:
        memory = make_memory(tmp_path, clock, **LOOSE)
        try:
            await _remember(memory, clock, CALLED, "The user's cat is called Luna.")
            report = await memory.run_maintenance(A)
            assert report.merged == 0 and report.settled == 2
            assert len(memory.list_claims(A)) == 2
        finally:
            await memory.aclose()

    asyncio.run(go())


@pytest.mark.parametrize(
    ("answer", "wording"),
    [
        ('{"same": true, "content": "The user has a cat named Miso."}', "merged"),
        ('{"same": true}', "kept"),
        (
            '{"same": true, "content": "The user has a cat named Miso, key sk-'
            'abcdefghijklmnopqrstuvwx1234."}',
            "kept",
        ),
    ],
)
def test_the_models_merged_wording_becomes_the_survivors_text(
    tmp_path: Path, answer: str, wording: str
) -> None:
    """§8.4 with a scripted text provider: the model's merged text is the survivor's new
    content (revision + 1, the merge edge as without it); no text, or one the secret policy
    refuses, leaves the survivor's own wording. Deleting the survivor then suppresses a
    replay of every text it stood for (R-FORGET-1)."""
    clock = ManualClock()
    text = ScriptedTextProvider([answer])
    pet = "The user keeps a cat, and its name is Miso."

    async def go() -> None:
        memory = make_memory(
            tmp_path, clock, overrides={"text_provider": text}, merge_similarity_threshold=0.3
        )
        try:
            older, newer = await _remember(memory, clock, CALLED, pet)
            before = memory.store.get(A, newer)
            report = await memory.run_maintenance(A, heavy=True)
            assert (report.mode, report.merged, report.llm_calls) == (PassMode.HEAVY, 1, 1)
            [survivor] = memory.list_claims(A)
            assert survivor.id == newer and survivor.revision == before.revision + 1
            merged = "The user has a cat named Miso."
            assert survivor.content == (merged if wording == "merged" else pet)
            assert "sk-" not in repr(memory.list_claims(A, include_inactive=True))
            parents = {e.parent_id for e in memory.store.list_derivations(A, newer)}
            assert older in parents
            await memory.delete(A, newer)
            for replay_text in {CALLED, pet, survivor.content}:
                replay = memory.store.insert(
                    ClaimDraft(agent_id=A, kind="semantic", content=replay_text),  # type: ignore[arg-type]
                    origin=WriteOrigin.EXTRACTION,
                    now=clock.now(),
                )
                assert replay.status is InsertStatus.SUPPRESSED, replay_text
        finally:
            await memory.aclose()

    asyncio.run(go())


class _DeafTextProvider:
    """Stalls every call and ignores its token: only the fence can end the pass."""

    provider_id = "deaf"
    model_id = "deaf-v1"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        self.calls += 1
        await asyncio.sleep(3_600)
        return '{"same": true}'

    async def aclose(self) -> None:
        return None


def test_stop_returns_at_once_and_drain_ends_a_pass_stalled_in_a_provider_call(
    tmp_path: Path,
) -> None:
    """R-MAINT-2: stop() is synchronous; drain() completes well within its timeout although
    the provider never returns — the fence, not the provider deadline, ends the pass."""
    clock = ManualClock()
    deaf = _DeafTextProvider()

    async def go() -> None:
        memory = make_memory(
            tmp_path, clock, overrides={"text_provider": deaf}, merge_similarity_threshold=0.3
        )
        try:
            await _remember(memory, clock, CALLED, "The user's dog is called Rex.")
            memory.start_maintenance()
            running = asyncio.ensure_future(memory.run_maintenance(A, heavy=True))
            for _ in range(500):
                if deaf.calls:
                    break
                await asyncio.sleep(0.01)
            assert deaf.calls == 1, "the pass never reached the provider"
            assert memory.maintenance_status().in_flight == (A,)
            started = time.monotonic()
            memory.stop_maintenance()
            await memory.drain_maintenance(timeout=5.0)
            assert time.monotonic() - started < 5.0
            report = await running
            assert report.stopped and report.merged == 0
            assert memory.maintenance_status().in_flight == ()
            assert len(memory.list_claims(A)) == 2  # nothing written after the fence
            with pytest.raises(FencedError):  # stopped: no new pass starts...
                await memory.run_maintenance(A)
            memory.start_maintenance()  # ...until start() re-arms
            assert memory.maintenance_status().running
        finally:
            await memory.aclose()

    asyncio.run(go())


def test_a_drain_of_many_stalled_passes_costs_the_rounds_of_one(tmp_path: Path) -> None:
    """R-MAINT-2: drain() collects every pass the fence ended at once instead of awaiting
    each in turn — the cost of a turn per pass made drains on a busy loop (each round slow)
    run past their timeout after every pass had settled. Counted in scheduler rounds, not
    seconds: eight stalled passes drain in fewer rounds than there are passes."""
    clock = ManualClock()
    deaf = _DeafTextProvider()
    agents = [f"agent-{i}" for i in range(8)]

    async def go() -> None:
        memory = make_memory(
            tmp_path,
            clock,
            overrides={"text_provider": deaf},
            merge_similarity_threshold=0.3,
            maintenance_concurrency=len(agents),
        )
        rounds = 0

        async def count() -> None:
            nonlocal rounds
            while True:
                rounds += 1
                await asyncio.sleep(0)

        counter = asyncio.ensure_future(count())
        try:
            for agent in agents:
                for text in (CALLED, "The user's dog is called Rex."):
                    await memory.remember(agent, text)
                    clock.advance(1)
            memory.start_maintenance()
            running = [asyncio.ensure_future(memory.run_maintenance(a, heavy=True)) for a in agents]
            for _ in range(1_000):
                if deaf.calls == len(agents):
                    break
                await asyncio.sleep(0.01)
            assert deaf.calls == len(agents), "not every pass reached the provider"
            memory.stop_maintenance()
            before = rounds
            await memory.drain_maintenance(timeout=30.0)
            assert rounds - before < len(agents)
            assert all(r.stopped for r in await asyncio.gather(*running))
            assert memory.maintenance_status().in_flight == ()
        finally:
            counter.cancel()
            await memory.aclose()

    asyncio.run(go())


def test_a_permanently_failing_seed_cannot_starve_the_queue(tmp_path: Path) -> None:
    """R-MAINT-1: a seed whose neighbour query always fails is deferred behind the rest;
    passes of one seed each still settle every other seed."""
    clock = ManualClock()

    async def go() -> None:
        memory = make_memory(tmp_path, clock, maintenance_seed_batch=1)
        try:
            poison, *others = await _remember(
                memory, clock, "poison fact", "tea in the morning", "runs on sundays"
            )
            vectors = memory.index.vectors
            assert vectors is not None
            real = vectors.query_by_id

            async def failing(
                agent_id: str,
                certificate: ReadyCertificate,
                claim_id: str,
                top_k: int,
                **kwargs: object,
            ) -> Sequence[VectorHit]:
                if claim_id == poison:
                    raise VectorStoreCold("always failing for this seed")
                return await real(agent_id, certificate, claim_id, top_k, **kwargs)  # type: ignore[arg-type]

            vectors.query_by_id = failing  # type: ignore[method-assign]
            deferred = 0
            for _ in range(len(others) + 1):
                clock.advance(1)
                report = await memory.run_maintenance(A, heavy=False)
                deferred += report.deferred
            assert deferred == 1
            assert [s.memory_id for s in memory.store.list_dirty(A, limit=64)] == [poison]
        finally:
            await memory.aclose()

    asyncio.run(go())


async def _challenged(memory: MemoryService, clock: ManualClock, target: str, text: str) -> str:
    clock.advance(1)
    outcome = memory.store.challenge(
        A,
        target,
        ClaimDraft(agent_id=A, kind="semantic", content=text),  # type: ignore[arg-type]
        expected_revision=memory.get_claim(A, target).revision,
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    assert outcome.claim is not None
    return outcome.claim.id


def test_a_heavy_pass_resolves_conflicts_and_reschedules_after_a_later_failure(
    tmp_path: Path,
) -> None:
    """§7.8, §8.3: with a scripted text provider the challenge step resolves the first
    conflict; the second call fails, the conflict stays open, and the success has already
    re-armed the agent's maintenance."""
    clock = ManualClock()
    text = ScriptedTextProvider(['{"resolution": "keep_challenger"}', ProviderUnavailable("down")])

    async def go() -> None:
        memory = make_memory(tmp_path, clock, overrides={"text_provider": text})
        try:
            (luna,) = await _remember(memory, clock, "The cat is called Luna.")
            (rex,) = await _remember(memory, clock, "The dog is called Rex.")
            miso = await _challenged(memory, clock, luna, "The cat is called Miso.")
            await _challenged(memory, clock, rex, "The dog is called Max.")
            memory.start_maintenance()
            report = await memory.run_maintenance(A, heavy=True)
            assert (report.mode, report.resolved, report.llm_failures) == (PassMode.HEAVY, 1, 1)
            assert A in memory.maintenance_status().armed
            live = {c.content for c in memory.list_claims(A)}
            assert live == {"The cat is called Miso.", "The dog is called Rex."}
            edges = memory.store.list_derivations(A, miso)
            assert [(e.parent_id, e.kind) for e in edges] == [(luna, DerivationKind.SUPERSEDE)]
            [left] = memory.list_conflicts(A)
            assert left.target.id == rex
        finally:
            await memory.aclose()

    asyncio.run(go())


@pytest.mark.parametrize(
    ("resolution", "live"),
    [
        ("keep_target", {"The cat is called Luna."}),
        ("keep_challenger", {"The cat is called Miso."}),
        ("keep_both", {"The cat is called Luna.", "The cat is called Miso."}),
    ],
)
def test_the_user_resolves_a_conflict(tmp_path: Path, resolution: str, live: set[str]) -> None:
    """§7.8: the user's keep_target | keep_challenger | keep_both, through the facade."""
    clock = ManualClock()

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        try:
            (luna,) = await _remember(memory, clock, "The cat is called Luna.")
            miso = await _challenged(memory, clock, luna, "The cat is called Miso.")
            [conflict] = memory.list_conflicts(A)
            assert (conflict.challenger.id, conflict.target.id) == (miso, luna)
            await memory.resolve_conflict(A, miso, resolution)
            assert {c.content for c in memory.list_claims(A)} == live
            assert memory.list_conflicts(A) == []
            events = [e for e in memory.audit_events(A) if e.event == "memory/challenge_resolved"]
            assert events[0].refs == {"target": luna, "resolution": resolution}
        finally:
            await memory.aclose()

    asyncio.run(go())


def _by_prompt(**answers: str) -> ScriptedTextProvider:
    """A scripted provider answering by which step's system prompt it is shown."""

    def answer(request: TextRequest) -> str:
        system = request.messages[0].content
        return next((text for key, text in answers.items() if key in system), '{"same": false}')

    return ScriptedTextProvider(default=None).then(*[answer] * 20)


FACTS = (
    "The user feeds the cat at seven.",
    "The user walks the dog every evening.",
    "The user cleans the aquarium on Sundays.",
    "The user bought a new cat tree.",
    "The user asked about dog food brands.",
    "The user adopted a rabbit last year.",
)


def test_reflection_writes_at_most_three_insights_with_lineage_from_every_source(
    tmp_path: Path,
) -> None:
    """§8.5, R-LINEAGE-1: enough important new claims trigger one reflection call; at most
    three insights become `reflection` claims with an edge from every input; the watermark
    stops a second pass from reflecting on the same claims."""
    clock = ManualClock()
    insights = ["The user cares deeply for pets.", "The user keeps routines.", "A", "B", "C"]
    text = _by_prompt(reflect=json.dumps(insights))

    async def go() -> None:
        memory = make_memory(tmp_path, clock, overrides={"text_provider": text})
        try:
            ids = []
            for fact in FACTS:
                result = await memory.remember(A, fact, importance=0.9)
                assert result.claim is not None
                ids.append(result.claim.id)
                clock.advance(1)
            report = await memory.run_maintenance(A, heavy=True)
            assert report.reflected == 3
            reflections = [c for c in memory.list_claims(A) if c.kind.value == "reflection"]
            assert {c.content for c in reflections} == set(insights[:3])
            for insight in reflections:
                parents = {e.parent_id for e in memory.store.list_derivations(A, insight.id)}
                assert parents == set(ids)
            clock.advance(60)
            again = await memory.run_maintenance(A, heavy=True)
            assert again.reflected == 0
        finally:
            await memory.aclose()

    asyncio.run(go())


def test_a_persona_draft_changes_nothing_until_the_user_approves_it(tmp_path: Path) -> None:
    """§8.6, R-MAINT-3: a heavy pass drafts a self-model from the agent's claims; the draft
    is not active, further passes neither activate nor replace it, and only the user's
    approval makes it the active persona."""
    clock = ManualClock()
    text = _by_prompt(reflect="[]", **{"self-model": "```\nI help a user who loves pets.\n```"})

    async def go() -> None:
        memory = make_memory(
            tmp_path, clock, overrides={"text_provider": text}, persona_evolution_enabled=True
        )
        try:
            for fact in FACTS:
                await memory.remember(A, fact, importance=0.9)
                clock.advance(1)
            report = await memory.run_maintenance(A, heavy=True)
            assert report.persona_drafts == 1
            view = memory.persona(A)
            assert view.active is None and view.draft is not None
            assert view.draft.content == "I help a user who loves pets."
            clock.advance(60)
            again = await memory.run_maintenance(A, heavy=True)
            assert again.persona_drafts == 0
            assert memory.persona(A).active is None and memory.persona(A).draft == view.draft
            assert all(c.kind.value != "persona" for c in memory.list_claims(A))
            active = await memory.approve_persona(A, view.draft.id)
            assert memory.persona(A).active == active and memory.persona(A).draft is None
        finally:
            await memory.aclose()

    asyncio.run(go())
