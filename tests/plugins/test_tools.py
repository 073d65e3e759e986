"""The model's memory tools: definitions an LLM receives and `handle_tool_call`'s results.

R-FORGET-2 (memory_forget archives and says so), R-WRITE-5 (memory_remember never brings
back forgotten text), R-PRIV-1 / R-PROV-5 (secrets refused, never echoed, never in a
result), R-DIR-1 (the tools create no directive).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from memory_core.domain.errors import StoreError, ValidationError
from memory_core.domain.scope import Scope
from memory_core.services.memory import MemoryService
from memory_plugins.api import open_memory_async
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.tools import TOOL_DEFINITIONS, TOOL_NAMES, handle_tool_call, tool_definitions

AGENT = "assistant"
KEY = "sk-proj-Zq8xV3nL5tR7wY9aB2cD4eF6gH8jK0mN1pQ3"


def with_memory(tmp_path: Path, body: Callable[[MemoryService], Awaitable[None]]) -> None:
    config = MemoryConfig()
    config = MemoryConfig(
        plugins={**config.plugins, "embedding_provider": PluginChoice(name="hashing")}
    )

    async def go() -> None:
        memory = await open_memory_async(tmp_path / "data", config=config)
        try:
            await body(memory)
        finally:
            await memory.aclose()

    asyncio.run(go())


async def call(memory: MemoryService, name: str, arguments: Any) -> dict[str, Any]:
    result = await handle_tool_call(memory, AGENT, "chat-1", name, arguments)
    json.dumps(result)  # every result is plain JSON
    return result


# --- definitions ----------------------------------------------------------------------------
def test_definitions_are_openai_function_tools_with_object_schemas() -> None:
    """The shape chat APIs accept: type function, a name, a description, an object schema
    whose required keys are declared properties and which forbids others."""
    assert [t["function"]["name"] for t in TOOL_DEFINITIONS] == [
        "memory_remember",
        "memory_recall",
        "memory_forget",
    ]
    assert frozenset(t["function"]["name"] for t in TOOL_DEFINITIONS) == TOOL_NAMES
    for tool in TOOL_DEFINITIONS:
        assert tool["type"] == "function"
        function = tool["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert len(function["description"]) > 40
        schema = function["parameters"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        for prop in schema["properties"].values():
            assert prop["type"] in ("string", "integer", ["integer", "null"])
            assert prop["description"]
    assert json.loads(json.dumps(TOOL_DEFINITIONS)) == list(TOOL_DEFINITIONS)


@pytest.mark.parametrize("strict", [False, True])
def test_user_tools_are_listed_only_on_request_and_after_the_models(strict: bool) -> None:
    model = [d["function"]["name"] for d in tool_definitions(strict=strict)]
    both = tool_definitions(strict=strict, user_tools=True)

    assert model == ["memory_remember", "memory_recall", "memory_forget"]
    assert [d["function"]["name"] for d in both] == [*model, "user_memory_add",
                                                      "user_memory_delete"]  # fmt: skip
    assert all(d["function"].get("strict", False) is strict for d in both)
    assert all(d["function"]["description"].startswith("USER-LEVEL:") for d in both[3:])


def test_tool_definitions_returns_a_copy_a_host_may_change() -> None:
    copy = tool_definitions()
    copy[0]["function"]["description"] = "changed"

    assert TOOL_DEFINITIONS[0]["function"]["description"] != "changed"


# --- behaviours ---------------------------------------------------------------------------------
def test_remember_recall_forget_round_trip(tmp_path: Path) -> None:
    """R-FORGET-2: memory_forget archives; its result says the memory is kept locally and
    can be restored; it is no longer recalled."""

    async def body(memory: MemoryService) -> None:
        saved = await call(memory, "memory_remember", {"content": "The user prefers tea."})
        assert saved["ok"] is True and saved["status"] == "stored"
        again = await call(memory, "memory_remember", '{"content": "The user prefers tea."}')
        assert again["status"] == "already_known" and again["id"] == saved["id"]
        assert await memory.warm(AGENT)  # what a host does at start: vector recall on

        found = await call(memory, "memory_recall", {"query": "tea", "top_k": 3})
        assert found["status"] == "found"
        (memory_view,) = found["memories"]
        assert memory_view["id"] == saved["id"]
        assert memory_view["content"] == "The user prefers tea."
        assert "when" not in memory_view  # timeless: the field is left out

        forgot = await call(memory, "memory_forget", {"memory_id": saved["id"]})
        assert forgot["ok"] is True and forgot["status"] == "archived"
        assert forgot["recoverable"] is True
        assert "kept locally" in forgot["message"] and "restored" in forgot["message"]

        after = await call(memory, "memory_recall", {"query": "tea"})
        assert after == {"ok": True, "status": "nothing_found",
                         "message": "Nothing relevant in memory.", "memories": []}  # fmt: skip
        archived = memory.store.get(AGENT, saved["id"])
        assert archived.lifecycle.value == "archived"

    with_memory(tmp_path, body)


def test_remember_of_deleted_text_requires_the_user(tmp_path: Path) -> None:
    """R-WRITE-5: the model cannot re-create text the user deleted; the result says only
    the user can add it back."""

    async def body(memory: MemoryService) -> None:
        saved = await call(memory, "memory_remember", {"content": "The user works at Globex."})
        await memory.delete(AGENT, saved["id"])

        again = await call(memory, "memory_remember", {"content": "The user works at Globex."})

        assert again["ok"] is False
        assert again["status"] == "requires_user_reauthorization"
        assert "Only the user can add it back" in again["message"]
        assert "Globex" not in json.dumps(again)
        assert memory.store.list_claims(AGENT) == []

    with_memory(tmp_path, body)


def test_a_secret_is_refused_without_being_echoed(tmp_path: Path) -> None:
    """R-PRIV-1, R-PROV-5: a credential is refused with a clear message that does not
    repeat it, and nothing is stored."""

    async def body(memory: MemoryService) -> None:
        result = await call(memory, "memory_remember", {"content": f"The user's API key is {KEY}."})

        assert result["ok"] is False and result["status"] == "refused_secret"
        assert "credential" in result["message"]
        assert KEY not in json.dumps(result) and KEY[8:20] not in json.dumps(result)
        assert memory.store.list_claims(AGENT, include_inactive=True) == []

    with_memory(tmp_path, body)


def test_tools_never_create_directives(tmp_path: Path) -> None:
    """R-DIR-1: an instruction given to memory_remember is stored as a fact, never as a
    directive."""

    async def body(memory: MemoryService) -> None:
        await call(memory, "memory_remember", {"content": "Always answer in German."})

        assert memory.list_directives(AGENT) == []

    with_memory(tmp_path, body)


@pytest.mark.parametrize(
    ("name", "arguments", "status", "fragment"),
    [
        ("memory_delete_everything", {}, "unknown_tool", "No tool named"),
        ("memory_remember", "{not json", "invalid_arguments", "not valid JSON"),
        ("memory_remember", "[1, 2]", "invalid_arguments", "JSON object"),
        ("memory_remember", {}, "invalid_arguments", "content: required"),
        ("memory_remember", {"content": "   "}, "invalid_arguments", "must not be empty"),
        ("memory_remember", {"content": 3}, "invalid_arguments", "must be a string"),
        ("memory_remember", {"content": "x" * 2001}, "invalid_arguments", "at most 2000"),
        ("memory_remember", {"content": "a", "scope": "user"}, "invalid_arguments", "unknown"),
        ("memory_recall", {"query": "tea", "top_k": 0}, "invalid_arguments", "1..20"),
        ("memory_recall", {"query": "tea", "top_k": True}, "invalid_arguments", "integer"),
        ("memory_recall", None, "invalid_arguments", "query: required"),
        ("memory_recall", {"query": "tea", "top_k": "3"}, "invalid_arguments", "integer or null"),
        ("memory_recall", {"query": None}, "invalid_arguments", "query: must be a string"),
        ("memory_forget", {"memory_id": "mem-nope"}, "not_found", "No memory with that id"),
    ],
)
def test_mistakes_of_the_model_come_back_as_readable_results(
    tmp_path: Path, name: str, arguments: Any, status: str, fragment: str
) -> None:
    async def body(memory: MemoryService) -> None:
        result = await call(memory, name, arguments)

        assert result["ok"] is False
        assert result["status"] == status
        assert fragment in result["message"]

    with_memory(tmp_path, body)


def test_a_store_failure_gives_its_type_never_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-PROV-5: failure details stay in logs; the model sees the kind of failure only."""

    async def body(memory: MemoryService) -> None:
        async def broken(*args: object, **kwargs: object) -> None:
            raise StoreError(f"disk full while writing {KEY}")

        monkeypatch.setattr(memory, "recall", broken)
        result = await call(memory, "memory_recall", {"query": "tea"})

        assert result == {
            "ok": False,
            "status": "unavailable",
            "message": "Memory is unavailable right now (StoreError).",
        }

    with_memory(tmp_path, body)


def test_an_invalid_agent_id_is_the_hosts_bug_and_raises(tmp_path: Path) -> None:
    async def body(memory: MemoryService) -> None:
        with pytest.raises(ValidationError):
            await handle_tool_call(memory, "not an id!", None, "memory_recall", {"query": "x"})

    with_memory(tmp_path, body)


def test_a_strict_client_sending_null_for_top_k_gets_the_default(tmp_path: Path) -> None:
    async def body(memory: MemoryService) -> None:
        await call(memory, "memory_remember", {"content": "The user prefers tea."})

        found = await call(memory, "memory_recall", '{"query": "tea", "top_k": null}')

        assert found["status"] == "found" and len(found["memories"]) == 1

    with_memory(tmp_path, body)


# --- user-level tools -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "arguments"),
    [("user_memory_add", {"content": "The user works at Globex."}),
     ("user_memory_delete", {"memory_id": "mem-1"})],
)  # fmt: skip
def test_a_user_level_tool_is_refused_unless_enabled(
    tmp_path: Path, name: str, arguments: dict[str, str]
) -> None:
    """R-WRITE-5, R-FORGET-1: a model's host does not get the user's powers by default."""

    async def body(memory: MemoryService) -> None:
        result = await call(memory, name, arguments)

        assert result["ok"] is False and result["status"] == "user_tool_not_enabled"
        assert name in result["message"]
        assert memory.list_claims(AGENT, include_inactive=True) == []

    with_memory(tmp_path, body)


def test_user_tools_add_back_forgotten_text_and_delete_for_good(tmp_path: Path) -> None:
    """R-WRITE-5: only the user's add releases a tombstone; R-FORGET-1: the user's delete
    is permanent, after which the model's remember of that text is refused again."""

    async def body(memory: MemoryService) -> None:
        async def user_call(name: str, arguments: dict[str, str]) -> dict[str, Any]:
            return await handle_tool_call(
                memory, AGENT, "chat-1", name, arguments, allow_user_tools=True
            )

        fact = {"content": "The user works at Globex."}
        saved = await call(memory, "memory_remember", fact)
        deleted = await user_call("user_memory_delete", {"memory_id": saved["id"]})
        assert deleted["status"] == "deleted" and deleted["recoverable"] is False
        assert memory.list_claims(AGENT, include_inactive=True) == []
        refused = await call(memory, "memory_remember", fact)
        assert refused["status"] == "requires_user_reauthorization"

        added = await user_call("user_memory_add", fact)

        assert added["ok"] is True and added["status"] == "stored"
        assert [c.content for c in memory.list_claims(AGENT)] == [fact["content"]]

    with_memory(tmp_path, body)


def test_a_user_scoped_memory_is_recalled_only_with_its_user(tmp_path: Path) -> None:
    """R-SCOPE-1: the user's memories join recall with their id; another user's id or none
    never widens to them."""

    async def body(memory: MemoryService) -> None:
        await memory.remember(AGENT, "The user's dog is called Rex.", scope=Scope.user("u1"))

        async def recall(user_id: str | None) -> dict[str, Any]:
            return await handle_tool_call(
                memory, AGENT, None, "memory_recall", {"query": "dog"}, user_id=user_id
            )

        assert (await recall("u1"))["status"] == "found"
        assert (await recall("u2"))["status"] == "nothing_found"
        assert (await recall(None))["status"] == "nothing_found"
        with pytest.raises(ValidationError):
            await recall(" u1")

    with_memory(tmp_path, body)
