"""The MCP server in-process, through the SDK's own client (`mcp.Client(server)`).

The tools are the in-process tools (one source of truth): same schemas, same validator,
same trust rules — R-WRITE-5 (no tombstone released by the model), R-FORGET-1/2 (the
model archives, only an enabled user-level tool deletes), R-DIR-1 (no directive), R-SCOPE-1
(a user's memories only with their id). Context the operator did not fix is per call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_core.domain.scope import Scope
from memory_core.services.memory import MemoryService
from memory_plugins.api import open_memory_async
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.mcp.options import McpOptions
from memory_plugins.mcp.server import MemoryToolServer
from memory_plugins.tool_schemas import TOOL_DEFINITIONS, USER_TOOL_DEFINITIONS, with_context

AGENT = "assistant"
DEADLINE_SECONDS = 60


def serve(
    tmp_path: Path,
    options: McpOptions,
    body: Callable[[Client, MemoryService], Awaitable[None]],
) -> None:
    config = MemoryConfig()
    config = MemoryConfig(
        plugins={**config.plugins, "embedding_provider": PluginChoice(name="hashing")}
    )

    async def go() -> None:
        memory = await open_memory_async(tmp_path / "data", config=config)
        tools = MemoryToolServer(memory, options)
        try:
            async with asyncio.timeout(DEADLINE_SECONDS), Client(tools.build()) as client:
                await body(client, memory)
        finally:
            await tools.stop_warm_ups()
            await memory.aclose()

    asyncio.run(go())


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    structured = result.structured_content
    assert result.is_error is (not structured["ok"])
    return structured


def test_the_listed_tools_are_the_in_process_definitions(tmp_path: Path) -> None:
    async def body(client: Client, memory: MemoryService) -> None:
        listed = (await client.list_tools()).tools

        expected = {d["function"]["name"]: d["function"] for d in TOOL_DEFINITIONS}
        assert [tool.name for tool in listed] == list(expected)
        for tool in listed:
            assert tool.input_schema == expected[tool.name]["parameters"]
            assert tool.description == expected[tool.name]["description"]
        assert listed[1].annotations.read_only_hint is True

    serve(tmp_path, McpOptions(agent_id=AGENT, session_id="s1", user_id="u1"), body)


def test_remember_recall_forget_and_a_refused_user_level_call(tmp_path: Path) -> None:
    """R-FORGET-2, R-DIR-1: the model's tools over MCP; the user's delete is not served."""

    async def body(client: Client, memory: MemoryService) -> None:
        saved = await call(client, "memory_remember", {"content": "The user prefers tea."})
        assert saved["status"] == "stored"
        found = await call(client, "memory_recall", {"query": "tea", "top_k": None})
        assert [m["id"] for m in found["memories"]] == [saved["id"]]

        forgot = await call(client, "memory_forget", {"memory_id": saved["id"]})
        assert forgot["status"] == "archived" and forgot["recoverable"] is True

        refused = await call(client, "user_memory_delete", {"memory_id": saved["id"]})
        assert refused["status"] == "user_tool_not_enabled"
        (archived,) = memory.list_claims(AGENT, include_inactive=True)
        assert archived.lifecycle.value == "archived"  # still there, recoverable
        assert (await call(client, "memory_recall", {"query": "tea"}))["memories"] == []
        assert memory.list_directives(AGENT) == []

    serve(tmp_path, McpOptions(agent_id=AGENT), body)


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"content": ""}, "content: must not be empty"),
        ({"content": "x", "scope": "user"}, "scope: unknown argument"),
        ({"content": "x", "agent_id": "other"}, "agent_id: unknown argument"),
    ],
)
def test_bad_arguments_are_the_validators_readable_results(
    tmp_path: Path, arguments: dict[str, Any], fragment: str
) -> None:
    """A fixed agent cannot be overridden per call: agent_id is not even an argument."""

    async def body(client: Client, memory: MemoryService) -> None:
        result = await call(client, "memory_remember", arguments)

        assert result["status"] == "invalid_arguments"
        assert result["message"].startswith(fragment)
        assert memory.list_claims(AGENT, include_inactive=True) == []

    serve(tmp_path, McpOptions(agent_id=AGENT), body)


def test_without_flags_each_call_names_its_agent_session_and_user(tmp_path: Path) -> None:
    """R-SCOPE-1: agents stay apart; a user's memory is recalled only with that user."""

    async def body(client: Client, memory: MemoryService) -> None:
        listed = (await client.list_tools()).tools
        fields = ["agent_id", "session_id", "user_id"]
        assert listed[1].input_schema == with_context(TOOL_DEFINITIONS[1], fields)[
            "function"
        ]["parameters"]  # fmt: skip
        missing = await call(client, "memory_recall", {"query": "dog"})
        assert missing["message"] == "agent_id: required"
        bad = await call(client, "memory_recall", {"query": "dog", "agent_id": "no such id!"})
        assert bad["status"] == "invalid_arguments" and bad["message"].startswith("agent_id")

        await memory.remember("ana", "The user's dog is called Rex.", scope=Scope.user("u1"))
        await call(client, "memory_remember", {"content": "Bo likes jazz.", "agent_id": "bo"})

        async def recall(agent: str, user: str | None) -> list[str]:
            arguments = {"query": "dog jazz", "agent_id": agent, "user_id": user}
            result = await call(client, "memory_recall", arguments)
            return [m["content"] for m in result["memories"]]

        assert await recall("ana", "u1") == ["The user's dog is called Rex."]
        assert await recall("ana", "u2") == []
        assert await recall("ana", None) == []
        assert await recall("bo", "u1") == ["Bo likes jazz."]

    serve(tmp_path, McpOptions(), body)


def test_enabled_user_tools_are_listed_under_their_own_names_and_run(tmp_path: Path) -> None:
    """R-WRITE-5, R-FORGET-1: only the operator's flag serves the user's add and delete."""

    async def body(client: Client, memory: MemoryService) -> None:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[3:] == [d["function"]["name"] for d in USER_TOOL_DEFINITIONS]
        fact = {"content": "The user works at Globex."}
        saved = await call(client, "memory_remember", fact)

        deleted = await call(client, "user_memory_delete", {"memory_id": saved["id"]})
        assert deleted["status"] == "deleted"
        assert (await call(client, "memory_remember", fact))["status"] == (
            "requires_user_reauthorization"
        )
        assert (await call(client, "user_memory_add", fact))["status"] == "stored"
        assert [c.content for c in memory.list_claims(AGENT)] == [fact["content"]]

    serve(tmp_path, McpOptions(agent_id=AGENT, allow_user_tools=True), body)


def test_an_agent_empty_at_start_gets_vector_recall_once_it_has_memories(
    tmp_path: Path,
) -> None:
    """A warm-up that earned no certificate (nothing embedded yet) is tried again on a later
    call, so recall leaves FTS-only (`vectorCold`) without the host calling `warm`."""
    config = MemoryConfig()
    config = MemoryConfig(
        plugins={**config.plugins, "embedding_provider": PluginChoice(name="hashing")}
    )

    async def go() -> None:
        memory = await open_memory_async(tmp_path / "data", config=config)
        tools = MemoryToolServer(memory, McpOptions(agent_id=AGENT), rewarm_seconds=0)
        try:
            async with asyncio.timeout(DEADLINE_SECONDS):
                tools.start_warm_up(AGENT)
                assert await tools.warm_up_result(AGENT) is False  # nothing to embed yet
                await tools.call("memory_remember", {"content": "The user prefers tea."})
                assert await tools.warm_up_result(AGENT) is True  # the call tried again

                found = await tools.call("memory_recall", {"query": "tea"})

                assert found["status"] == "found" and "degradations" not in found
        finally:
            await tools.stop_warm_ups()
            await memory.aclose()

    asyncio.run(go())
