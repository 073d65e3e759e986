"""The management routes over a real memory (SQLite, DuckDB, hashing embedder) and the
in-memory tape as its `TapeInspectionReader` (issue 12): claims paged and changed, the
source span of an extracted claim, view manifests of a turn, conflicts, persona,
directives, maintenance and audit — every answer a JSON-ready DTO."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from memory_adapters.tapes import InMemoryTape
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, ClaimKind, WriteOrigin
from memory_core.domain.errors import NotFound, RevisionConflict
from memory_core.services.memory import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins
from memory_plugins.routes import MemoryRoutes, route_converter

A = "agent-a"


def _run(
    tmp_path: Path, scenario: Callable[[MemoryService, MemoryRoutes, InMemoryTape], Awaitable[None]]
) -> None:
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    clock, tape = ManualClock(), InMemoryTape()

    async def go() -> None:
        memory = open_memory(
            tmp_path / "data",
            config=MemoryConfig(plugins=plugins),
            tape=tape,
            clock=clock,
            registry=load_plugins(strict=True, distributions={"agent-memory"}).registry,
        )
        try:
            await scenario(memory, MemoryRoutes(memory, tape=tape, clock=clock), tape)
        finally:
            await memory.aclose()

    asyncio.run(go())


def _json(value: object) -> object:
    return json.loads(json.dumps(route_converter.unstructure(value)))


def test_claim_routes_page_change_and_forget(tmp_path: Path) -> None:
    async def scenario(memory: MemoryService, routes: MemoryRoutes, _: InMemoryTape) -> None:
        for fact in ("The user likes tea.", "The user plays chess.", "The user owns a boat."):
            assert await routes.add_claim(A, fact) is not None
        first = routes.list_claims(A, limit=2)
        assert len(first.items) == 2 and first.next_after == first.items[-1].id
        rest = routes.list_claims(A, limit=2, after=first.next_after)
        assert len(rest.items) == 1 and rest.next_after is None
        claim = rest.items[0]
        assert _json(claim)["scope"] == "agent"  # type: ignore[index]
        assert (await routes.archive_claim(A, claim.id)).lifecycle == "archived"
        assert len(routes.list_claims(A).items) == 2
        assert (await routes.restore_claim(A, claim.id)).lifecycle == "active"
        hits = await routes.search(A, "chess")
        assert "The user plays chess." in {h.content for h in hits}
        assert await routes.delete_claim(A, claim.id) >= 2
        with pytest.raises(NotFound):
            routes.get_claim(A, claim.id)

    _run(tmp_path, scenario)


def test_a_claims_source_span_and_the_turns_manifest(tmp_path: Path) -> None:
    async def scenario(memory: MemoryService, routes: MemoryRoutes, tape: InMemoryTape) -> None:
        tape.append_message("s1", "user", "I moved to Lisbon last year.")
        tape.append_message("s1", "assistant", "Lisbon is lovely.")
        session = memory.session(A, "s1")
        session.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True))
        await session.drain()
        (claim,) = routes.list_claims(A).items
        span = await routes.claim_source(A, claim.id)
        assert span is not None and span.session_id == "s1"
        assert "I moved to Lisbon last year." in {m.content for m in span.messages}
        message = tape.append_message("s1", "user", "Where do I live?")
        await session.prepare_turn(message.id, "Where do I live?")
        await session.drain()
        manifests = await routes.manifests(A, session_id="s1", message_id=message.id)
        assert [m.message_id for m in manifests] == [message.id]
        assert isinstance(_json(manifests[0])["manifest"], dict)  # type: ignore[index]

    _run(tmp_path, scenario)


def test_conflict_persona_directive_and_upkeep_routes(tmp_path: Path) -> None:
    async def scenario(memory: MemoryService, routes: MemoryRoutes, _: InMemoryTape) -> None:
        target = await routes.add_claim(A, "The cat is called Luna.")
        assert target is not None
        outcome = memory.store.challenge(
            A,
            target.id,
            ClaimDraft(agent_id=A, kind=ClaimKind.SEMANTIC, content="The cat is called Miso."),
            expected_revision=memory.get_claim(A, target.id).revision,
            origin=WriteOrigin.EXTRACTION,
            now=memory.now(),
        )
        assert outcome.claim is not None
        (conflict,) = routes.list_conflicts(A)
        assert conflict.target.id == target.id
        standing = await routes.resolve_conflict(A, outcome.claim.id, "keep_target")
        assert standing.id == target.id and routes.list_conflicts(A) == ()

        draft = memory.store.draft_persona(A, "I am a calm helper.", now=memory.now())
        assert draft is not None
        assert routes.persona(A).draft is not None and routes.persona(A).active is None
        assert (await routes.approve_persona(A, draft.id)).state == "active"
        second = memory.store.draft_persona(A, "I am a brisk, witty helper.", now=memory.now())
        assert second is not None
        await routes.approve_persona(A, second.id)
        restored = await routes.rollback_persona(A)  # only the user's call brings it back
        assert (restored.id, restored.state) == (draft.id, "active")
        assert routes.persona(A).active.id == draft.id  # type: ignore[union-attr]

        edited = await routes.update_claim(A, target.id, "The cat is called Luna Belle.")
        assert edited.content == "The cat is called Luna Belle."
        with pytest.raises(RevisionConflict):
            await routes.update_claim(
                A,
                edited.id,
                "Stale edit.",
                expected_revision=edited.revision + 1,
            )

        directive = routes.create_directive(A, "instruction", "Answer in English.")
        assert [d.id for d in routes.list_directives(A, status="active")] == [directive.id]

        report = await routes.run_maintenance(A)
        assert report["mode"] == "cheap"
        status = routes.maintenance_status(A)
        assert status["last_passes"] and status["dirty_seeds"] >= 0
        events = {e.event for e in routes.audit(A)}
        assert {
            "memory/challenge_resolved",
            "persona/approve",
            "persona/rollback",
            "memory/manual_edit",
            "memory/maintenance",
        } <= events
        health = await routes.health(A)
        assert health["healthy"] in (True, False)
        json.dumps(health)  # JSON-ready, as every route's answer

    _run(tmp_path, scenario)
