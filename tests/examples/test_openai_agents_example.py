"""`examples/openai_agents/memory_agent.py`: the OpenAI Agents SDK with our tools and the
per-turn contribution, as a subprocess against the loopback OpenAI-compatible server.

The server plays a scripted model: a `memory_remember` tool call, a reply, and a reply on
the next turn; it records every request. R-HOST-1 (a host's turn: tape, prepare_turn +
place, after_turn_settled), R-READ-1/7 (memory in the user's message, never the
instructions, the user's words last), R-WRITE-5/R-FORGET-2 via our handler, R-PROV-5 (the key
goes in the header only).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from httpx_loopback import Loopback, Recorded, json_reply

from memory_plugins.api import open_memory_async
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.tool_schemas import MODEL_TOOL_NAMES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "openai_agents" / "memory_agent.py"
API_KEY = "sk-test-loopback-4Rt8Yu2Io6Pa1Sd3"
FACT = "The user's sister is called Marta."
USER_LINES = ["Please remember that my sister is called Marta.", "What is my sister called?"]


def _completion(message: dict[str, Any], finish_reason: str) -> Any:
    return json_reply(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": "test-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    )


REMEMBER_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "memory_remember", "arguments": json.dumps({"content": FACT})},
}
SCRIPT = [
    _completion({"role": "assistant", "content": None, "tool_calls": [REMEMBER_CALL]},
                "tool_calls"),
    _completion({"role": "assistant", "content": "Noted: your sister is Marta."}, "stop"),
    _completion({"role": "assistant", "content": "Your sister is called Marta."}, "stop"),
]  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[Loopback]:
    with Loopback() as loopback:
        loopback.then(*SCRIPT)
        yield loopback


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("agents-example") / "data"


@pytest.fixture(scope="module")
def run(server: Loopback, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": API_KEY}
    return subprocess.run(
        [
            sys.executable, str(EXAMPLE), "--base-url", f"{server.url}/v1",
            "--model", "test-model", "--data-dir", str(data_dir), "--embedder", "hashing",
        ],
        input="\n".join(USER_LINES) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )  # fmt: skip


def _requests(server: Loopback) -> list[Recorded]:
    return [r for r in server.requests if r.path == "/v1/chat/completions"]


def _user_messages(request: Recorded) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def test_each_turn_is_answered_with_our_tools_in_strict_form(
    run: subprocess.CompletedProcess[str], server: Loopback
) -> None:
    assert run.returncode == 0, run.stderr
    replies = [line for line in run.stdout.splitlines() if line.startswith("assistant> ")]
    assert replies == [
        "assistant> Noted: your sister is Marta.",
        "assistant> Your sister is called Marta.",
    ]
    requests = _requests(server)
    assert len(requests) == 3 == len(server.requests)
    for request in requests:
        functions = [tool["function"] for tool in request.body["tools"]]
        assert {f["name"] for f in functions} == MODEL_TOOL_NAMES
        for function in functions:
            assert function["strict"] is True
            assert function["parameters"]["required"] == list(function["parameters"]["properties"])


def test_the_models_tool_call_runs_through_our_handler(
    run: subprocess.CompletedProcess[str], server: Loopback, data_dir: Path
) -> None:
    """The tool result the model reads is `handle_tool_call`'s; the fact is stored."""
    assert run.returncode == 0, run.stderr
    follow_up = _requests(server)[1].body["messages"]
    tool = follow_up[-1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert json.loads(tool["content"])["status"] == "stored"

    async def stored() -> list[str]:
        config = MemoryConfig()
        plugins = {**config.plugins, "embedding_provider": PluginChoice(name="hashing")}
        memory = await open_memory_async(data_dir, config=MemoryConfig(plugins=plugins))
        try:
            return [claim.content for claim in memory.list_claims("assistant")]
        finally:
            await memory.aclose()

    assert FACT in asyncio.run(stored())


def test_the_contribution_is_placed_before_the_users_words_never_in_the_instructions(
    run: subprocess.CompletedProcess[str], server: Loopback
) -> None:
    """R-READ-1, R-READ-7: the second turn's user message carries what memory recalled in
    its container, the user's own words last; history keeps the raw words."""
    assert run.returncode == 0, run.stderr
    first, _, second = _requests(server)
    assert _user_messages(first) == [USER_LINES[0]]  # nothing remembered yet
    *earlier, placed = _user_messages(second)
    assert earlier == USER_LINES[:1]
    assert placed.endswith(f"\n\n{USER_LINES[1]}")
    assert placed.index("<context-data") < placed.index(FACT)
    for request in (first, second):
        instructions = [m for m in request.body["messages"] if m["role"] in {"system", "developer"}]
        assert instructions and all("<context-data" not in m["content"] for m in instructions)


def test_the_key_goes_to_the_model_and_nowhere_else(
    run: subprocess.CompletedProcess[str], server: Loopback, data_dir: Path
) -> None:
    """R-PROV-5: the Authorization header only; not printed, not on the tape."""
    assert run.returncode == 0, run.stderr
    assert {r.headers.get("authorization") for r in server.requests} == {f"Bearer {API_KEY}"}
    assert API_KEY not in run.stdout + run.stderr
    assert API_KEY not in (data_dir / "chat.jsonl").read_text(encoding="utf-8")
