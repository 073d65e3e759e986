"""R-DOM-4: one validation at the public boundary. Every public MemoryService method and the
model's tool handler refuse a bad input with a ValidationError naming the field, before
anything is stored: no AttributeError, TypeError, bare ValueError or UnicodeEncodeError from
deep inside, and no row written under a bad owner."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.errors import ValidationError
from memory_core.services.memory import MemoryService, RankSource
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins
from memory_plugins.tools import handle_tool_call

AGENT = "owner"
LONE = "caf\udce9"  # what Python makes of the invalid UTF-8 byte 0xE9 in an argument
CLAIM = "claim-0"

Call = Callable[[MemoryService], Any]

# (case id, the call, the field the error must name)
CASES: list[tuple[str, Call, str]] = [
    # agent ids on every door that names an agent
    ("forget-agent", lambda m: m.forget("../x", CLAIM), "agent_id"),
    ("delete-agent", lambda m: m.delete("../x", CLAIM), "agent_id"),
    ("restore-agent", lambda m: m.restore("../x", CLAIM), "agent_id"),
    ("warm-agent", lambda m: m.warm("../x"), "agent_id"),
    ("embed-agent", lambda m: m.embed_pending("a b"), "agent_id"),
    ("recall-agent", lambda m: m.recall("../x", "tea"), "agent_id"),
    ("remember-agent", lambda m: m.remember(None, "The user likes tea."), "agent_id"),
    (
        "create-directive-agent",
        lambda m: m.create_directive("../x", DirectiveKind.INSTRUCTION, "Answer briefly."),
        "agent_id",
    ),
    (
        "suggest-directive-agent",
        lambda m: m.suggest_directive("../x", DirectiveKind.INSTRUCTION, "Answer briefly."),
        "agent_id",
    ),
    ("approve-directive-agent", lambda m: m.approve_directive("../x", "d-1"), "agent_id"),
    ("reject-directive-agent", lambda m: m.reject_directive("../x", "d-1"), "agent_id"),
    ("list-directives-agent", lambda m: m.list_directives("../x"), "agent_id"),
    ("session-agent", lambda m: m.session("../x", "s1"), "agent_id"),
    # session ids: surrounding whitespace would alias another session
    ("session-padded", lambda m: m.session(AGENT, " s1"), "session_id"),
    ("session-blank", lambda m: m.session(AGENT, "   "), "session_id"),
    ("session-none", lambda m: m.session(AGENT, None), "session_id"),
    ("recall-session-padded", lambda m: m.recall(AGENT, "tea", session_id="s1 "), "session_id"),
    (
        "remember-session-padded",
        lambda m: m.remember(AGENT, "The user likes tea.", session_id="\ts1"),
        "session_id",
    ),
    ("session-kind", lambda m: m.session(AGENT, "s1", kind="bogus"), "kind"),
    # ids and budgets
    ("forget-claim-id", lambda m: m.forget(AGENT, 7), "claim_id"),
    ("delete-claim-id", lambda m: m.delete(AGENT, ""), "claim_id"),
    ("restore-claim-id", lambda m: m.restore(AGENT, " claim-0"), "claim_id"),
    ("get-claim-id", lambda m: m.get_claim(AGENT, None), "claim_id"),
    ("approve-directive-id", lambda m: m.approve_directive(AGENT, ""), "directive_id"),
    ("recall-top-k-text", lambda m: m.recall(AGENT, "tea", top_k="3"), "top_k"),
    ("recall-top-k-zero", lambda m: m.recall(AGENT, "tea", top_k=0), "top_k"),
    ("list-limit", lambda m: m.list_claims(AGENT, limit="10"), "limit"),
    ("list-inactive", lambda m: m.list_claims(AGENT, include_inactive="yes"), "include_inactive"),
    ("rank-depth", lambda m: m.rank(AGENT, "tea", source=RankSource.FTS, depth=0), "depth"),
    ("rank-source", lambda m: m.rank(AGENT, "tea", source="both", depth=5), "source"),
    # wrong types that used to reach attribute code
    ("remember-scope-text", lambda m: m.remember(AGENT, "Tea.", scope="session"), "scope"),
    ("remember-kind", lambda m: m.remember(AGENT, "Tea.", kind="opinion"), "kind"),
    ("remember-category", lambda m: m.remember(AGENT, "Tea.", category="misc"), "category"),
    ("remember-importance", lambda m: m.remember(AGENT, "Tea.", importance=3), "importance"),
    ("remember-user-add", lambda m: m.remember(AGENT, "Tea.", user_add="no"), "user_add"),
    ("remember-temporal", lambda m: m.remember(AGENT, "Tea.", temporal="now"), "temporal"),
    ("remember-content-type", lambda m: m.remember(AGENT, b"Tea."), "content"),
    ("recall-purpose", lambda m: m.recall(AGENT, "tea", purpose="spy"), "purpose"),
    ("directive-kind", lambda m: m.create_directive(AGENT, "law", "Be brief."), "kind"),
    ("list-directives-status", lambda m: m.list_directives(AGENT, status="on"), "status"),
    # the turn: a malformed argument is the host's bug, refused before the fail-open region
    ("turn-message-id-type", lambda m: m.session(AGENT, "s1").prepare_turn(7, "Hi"), "message_id"),
    (
        "turn-message-id-blank",
        lambda m: m.session(AGENT, "s1").prepare_turn(" ", "Hi"),
        "message_id",
    ),
    ("turn-text-type", lambda m: m.session(AGENT, "s1").prepare_turn("m1", None), "user_text"),
    (
        "turn-budget-zero",
        lambda m: m.session(AGENT, "s1").prepare_turn("m1", "Hi", budget_tokens=0),
        "budget_tokens",
    ),
    (
        "turn-budget-string",
        lambda m: m.session(AGENT, "s1").prepare_turn("m1", "Hi", budget_tokens="800"),
        "budget_tokens",
    ),
    # lone surrogates: a typed error, not UnicodeEncodeError from the store
    ("remember-surrogate", lambda m: m.remember(AGENT, f"The user likes {LONE}."), "content"),
    ("recall-surrogate", lambda m: m.recall(AGENT, LONE), "query"),
    ("session-surrogate", lambda m: m.session(AGENT, LONE), "session_id"),
    (
        "directive-surrogate",
        lambda m: m.create_directive(AGENT, DirectiveKind.INSTRUCTION, LONE),
        "content",
    ),
    ("forget-surrogate-id", lambda m: m.forget(AGENT, LONE), "claim_id"),
]


def _memory(tmp_path: Path) -> MemoryService:
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    return open_memory(
        tmp_path / "data",
        config=MemoryConfig(settings=MemorySettings(), plugins=plugins),
        clock=ManualClock(),
        registry=load_plugins(strict=True, distributions={"agent-memory"}).registry,
    )


@pytest.mark.parametrize(("call", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_input_is_a_validation_error_naming_its_field(
    tmp_path: Path, call: Call, field: str
) -> None:
    """R-DOM-4: the typed error names the field; nothing is stored for any owner."""

    async def go() -> None:
        memory = _memory(tmp_path)
        try:
            with pytest.raises(ValidationError) as caught:
                result = call(memory)
                if inspect.isawaitable(result):
                    await result
            assert caught.value.field == field
            assert memory.list_claims(AGENT, include_inactive=True) == []
            assert memory.list_directives(AGENT) == []
        finally:
            await memory.aclose()

    asyncio.run(go())


def test_no_directive_is_stored_under_a_path_like_owner(tmp_path: Path) -> None:
    """R-DOM-4: `create_directive("../x", ...)` once stored a directive under owner `../x`."""

    async def go() -> None:
        memory = _memory(tmp_path)
        try:
            with pytest.raises(ValidationError):
                memory.create_directive("../x", DirectiveKind.INSTRUCTION, "Answer briefly.")
            # A valid owner still works, and the refused call left nothing behind.
            memory.create_directive(AGENT, DirectiveKind.INSTRUCTION, "Answer briefly.")
            assert len(memory.list_directives(AGENT)) == 1
        finally:
            await memory.aclose()

    asyncio.run(go())


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("memory_remember", {"content": f"The user likes {LONE}."}, "content"),
        ("memory_recall", {"query": LONE}, "query"),
        ("memory_forget", {"memory_id": LONE}, "memory_id"),
    ],
)
def test_the_model_tools_refuse_lone_surrogates_as_invalid_arguments(
    tmp_path: Path, name: str, arguments: dict[str, str], field: str
) -> None:
    """R-DOM-4: the tools share the boundary's text check; the model reads a typed result."""

    async def go() -> dict[str, Any]:
        memory = _memory(tmp_path)
        try:
            return await handle_tool_call(memory, AGENT, "s1", name, arguments)
        finally:
            await memory.aclose()

    result = asyncio.run(go())
    assert result["ok"] is False
    assert result["status"] == "invalid_arguments"
    assert result["message"].startswith(f"{field}:")


def test_the_model_tools_refuse_a_padded_session_id(tmp_path: Path) -> None:
    """R-DOM-4: a host passing `" s1"` is a host bug, raised like a bad agent id."""

    async def go() -> None:
        memory = _memory(tmp_path)
        try:
            with pytest.raises(ValidationError) as caught:
                await handle_tool_call(memory, AGENT, " s1", "memory_recall", {"query": "tea"})
            assert caught.value.field == "session_id"
        finally:
            await memory.aclose()

    asyncio.run(go())
