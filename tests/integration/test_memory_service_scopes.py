"""Scopes end to end (R-SCOPE-1/2): a user- or project-scoped claim is recalled by
`recall()`, by a session's turn and by the model's tool only in its own user or project,
never without one; Agent-scope claims are seen everywhere in the owner."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from memory_world import make_memory

from memory_contracts.fakes import ManualClock
from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import Scope
from memory_core.services.memory import MemoryService
from memory_plugins.tools import handle_tool_call

A = "assistant"
FACT = "The user's standing desk is set to 112 centimetres."
QUERY = "standing desk height"


def run_with(tmp_path: Path, work: Callable[[MemoryService], Awaitable[None]]) -> None:
    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock())
        try:
            await work(memory)
        finally:
            await memory.aclose()

    asyncio.run(go())


SCOPES = [
    pytest.param(Scope.user("u1"), "user_id", id="user"),
    pytest.param(Scope.project("p1"), "project_id", id="project"),
]


@pytest.mark.parametrize(("scope", "field"), SCOPES)
def test_recall_sees_a_narrow_claim_only_in_its_own_scope(
    tmp_path: Path, scope: Scope, field: str
) -> None:
    """R-SCOPE-1: recalled with its id, not with another id nor without one."""

    async def work(memory: MemoryService) -> None:
        stored = await memory.remember(A, FACT, scope=scope)
        await memory.warm(A)  # both sources in play: the scope filter holds on each

        async def found(**ids: str) -> list[str]:
            result = await memory.recall(A, QUERY, **ids)
            return [item.claim.id for item in result.items]

        assert await found(**{field: scope.scope_id}) == [stored.claim_id]
        assert await found(**{field: "someone-else"}) == []
        assert await found() == []
        assert await found(session_id=scope.scope_id) == []  # a session id is not a user id

    run_with(tmp_path, work)


@pytest.mark.parametrize(("scope", "field"), SCOPES)
def test_a_session_opened_for_a_user_recalls_that_users_claims_in_its_turns(
    tmp_path: Path, scope: Scope, field: str
) -> None:
    """R-SCOPE-1 on the turn: `session(..., user_id=...)` / `project_id=...` reaches the
    narrow claim; the same message in another user's or an anonymous session does not."""

    async def work(memory: MemoryService) -> None:
        await memory.remember(A, FACT, scope=scope)
        agent_wide = await memory.remember(A, "The user's office is on the third floor.")
        assert agent_wide.claim_id is not None
        mine = memory.session(A, "chat-1", **{field: scope.scope_id})
        theirs = memory.session(A, "chat-2", **{field: "someone-else"})
        anonymous = memory.session(A, "chat-3")
        text = "How high is my standing desk, and which floor is the office on?"
        inside = await mine.prepare_turn("m1", text)
        assert FACT in (inside.text or "")
        for other in (theirs, anonymous):
            outside = await other.prepare_turn("m1", text)
            assert FACT not in (outside.text or "")
            assert "third floor" in (outside.text or "")

    run_with(tmp_path, work)


def test_the_models_tools_save_and_recall_in_the_hosts_user_scope(tmp_path: Path) -> None:
    """R-SCOPE-1: with the host's user id, `memory_remember` stores at that user's scope
    and `memory_recall` finds it for that user only."""

    async def work(memory: MemoryService) -> None:
        saved = await handle_tool_call(
            memory, A, "chat-1", "memory_remember", {"content": FACT}, user_id="u1"
        )
        assert saved["ok"], saved
        assert (await memory.get(A, saved["id"])).scope == Scope.user("u1")

        async def recalled(**ids: str) -> list[str]:
            answer = await handle_tool_call(
                memory, A, "chat-9", "memory_recall", {"query": QUERY}, **ids
            )
            return [m["id"] for m in answer.get("memories", [])]

        assert await recalled(user_id="u1") == [saved["id"]]
        assert await recalled(user_id="u2") == []
        assert await recalled() == []

    run_with(tmp_path, work)


def test_a_session_serves_one_user(tmp_path: Path) -> None:
    """R-SCOPE-1: asking for an open session under another user is refused (the cached
    runtime would read the first user's scope); asking without one finds it as opened."""

    async def work(memory: MemoryService) -> None:
        first = memory.session(A, "chat-1", user_id="u1")
        assert memory.session(A, "chat-1") is first
        assert memory.session(A, "chat-1", user_id="u1") is first
        with pytest.raises(ValidationError) as caught:
            memory.session(A, "chat-1", user_id="u2")
        assert caught.value.field == "user_id"

    run_with(tmp_path, work)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m: m.recall(A, QUERY, user_id=" u1"), "user_id"),
        (lambda m: m.recall(A, QUERY, project_id=7), "project_id"),
        (lambda m: _session(m, user_id=""), "user_id"),
        (
            lambda m: handle_tool_call(m, A, None, "memory_recall", {"query": "x"}, user_id=1),
            "user_id",
        ),
    ],
)
def test_malformed_scope_ids_are_refused_naming_the_field(
    tmp_path: Path, call: Callable[[MemoryService], Awaitable[object]], field: str
) -> None:
    """R-DOM-4: an id with surrounding whitespace would be another user's; refused."""

    async def work(memory: MemoryService) -> None:
        with pytest.raises(ValidationError) as caught:
            await call(memory)
        assert caught.value.field == field

    run_with(tmp_path, work)


async def _session(memory: MemoryService, **ids: str) -> object:
    return memory.session(A, "chat-1", **ids)
