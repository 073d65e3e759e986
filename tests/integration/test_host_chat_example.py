"""`examples/host_chat.py` against a loopback OpenAI-compatible server, as a subprocess.

The server plays a scripted model: a plain reply, a `memory_remember` tool call and its
follow-up, and a last reply; it records every request. R-HOST-1 (a host's turn: tape,
prepare_turn + place, reply on the tape, after_turn_settled), R-READ-1/6/7 (memory goes
into the user's message, never the system prompt, the user's words last), R-FORGET-2 /
R-WRITE-5 via the tools, R-PROV-5 (the API key is sent, never printed or stored).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from memory_plugins.api import open_memory_async
from memory_plugins.config import MemoryConfig, PluginChoice

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "host_chat.py"
API_KEY = "sk-test-loopback-7Hq2Lm9Xc4Vb8Nz1"

# Long enough that one user line and it pass the admission threshold of a settled turn.
FIRST_REPLY = (
    "Bonjour! Paris is a wonderful place to live. I will keep my answers short, as you "
    "prefer, and I am happy to help with anything you need, from planning to writing."
)
USER_LINES = [
    "Hi! I live in Paris.",
    "Please remember that my sister is called Marta.",
    "What do you know about me?",
]


def _message(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


SCRIPT = [
    _message(FIRST_REPLY),
    _message(
        None,
        [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "memory_remember",
                    "arguments": json.dumps({"content": "The user's sister is called Marta."}),
                },
            }
        ],
    ),
    _message("Noted: your sister is Marta."),
    _message("You live in Paris and your sister is Marta."),
]


class ScriptedModel:
    """Answers POST /v1/chat/completions from SCRIPT in order and records the requests."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(body)
                model.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions" or len(model.requests) > len(SCRIPT):
                    self.send_error(404)
                    return
                payload = json.dumps(SCRIPT[len(model.requests) - 1]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    scripted = ScriptedModel()
    scripted.thread.start()
    yield scripted
    scripted.server.shutdown()
    scripted.server.server_close()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("host-chat") / "data"


@pytest.fixture(scope="module")
def chat(model: ScriptedModel, data_dir: Path) -> subprocess.CompletedProcess[str]:
    """One chat of three lines, shared by the tests that read its traces."""
    env = {**os.environ, "OPENAI_API_KEY": API_KEY}
    return subprocess.run(
        [
            sys.executable, str(EXAMPLE), "--base-url", model.base_url, "--model", "test-model",
            "--data-dir", str(data_dir), "--embedder", "hashing",
        ],
        input="\n".join(USER_LINES) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )  # fmt: skip


def last_user(request: dict[str, Any]) -> str:
    return [m for m in request["messages"] if m["role"] == "user"][-1]["content"]


def test_the_chat_runs_each_turn_through_memory_and_the_model(
    chat: subprocess.CompletedProcess[str], model: ScriptedModel
) -> None:
    """R-HOST-1, R-READ-7: every message is answered; the tools ride along on every call."""
    assert chat.returncode == 0, chat.stderr
    replies = [line for line in chat.stdout.splitlines() if line.startswith("assistant> ")]
    assert replies == [
        f"assistant> {FIRST_REPLY}",
        "assistant> Noted: your sister is Marta.",
        "assistant> You live in Paris and your sister is Marta.",
    ]
    assert len(model.requests) == 4
    for request in model.requests:
        assert request["model"] == "test-model"
        names = [tool["function"]["name"] for tool in request["tools"]]
        assert names == ["memory_remember", "memory_recall", "memory_forget"]
        (system,) = [m for m in request["messages"] if m["role"] == "system"]
        assert "<context-data" not in system["content"]  # R-READ-1: never the system prompt


def test_a_tool_call_is_executed_and_its_result_sent_back(
    chat: subprocess.CompletedProcess[str], model: ScriptedModel
) -> None:
    """The model's memory_remember runs through handle_tool_call; its JSON result follows
    the assistant's tool call in the next request."""
    assert chat.returncode == 0, chat.stderr
    follow_up = model.requests[2]["messages"]
    assert follow_up[-2]["tool_calls"][0]["id"] == "call_1"
    tool = follow_up[-1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert json.loads(tool["content"])["status"] == "stored"


def test_remembered_memory_is_placed_before_the_users_words_in_a_later_turn(
    chat: subprocess.CompletedProcess[str], model: ScriptedModel
) -> None:
    """R-READ-6, R-READ-7: the contribution is prepended to the current user message in a
    read-only container; the user's own words stay last; history keeps the raw words."""
    assert chat.returncode == 0, chat.stderr
    last = model.requests[3]
    placed = last_user(last)
    assert placed.endswith("\n\nWhat do you know about me?")
    assert placed.index("<context-data") < placed.index("The user's sister is called Marta.")
    earlier = [m["content"] for m in last["messages"] if m["role"] == "user"][:-1]
    assert earlier == USER_LINES[:2]
    assert last_user(model.requests[0]) == USER_LINES[0]  # nothing remembered yet


def test_the_key_is_sent_to_the_model_and_nowhere_else(
    chat: subprocess.CompletedProcess[str], model: ScriptedModel, data_dir: Path
) -> None:
    """R-PROV-5: the key goes in the Authorization header only."""
    assert chat.returncode == 0, chat.stderr
    assert {h.get("Authorization") for h in model.headers} == {f"Bearer {API_KEY}"}
    assert API_KEY not in chat.stdout and API_KEY not in chat.stderr
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes(), path


def test_the_tape_and_the_store_hold_what_a_host_expects(
    chat: subprocess.CompletedProcess[str], data_dir: Path
) -> None:
    """R-WRITE-1, R-WRITE-8: the tape has the turns and memory's anchors; the background
    extraction (drained at exit) stored the user's home next to the tool-remembered fact."""
    assert chat.returncode == 0, chat.stderr
    records = [json.loads(line) for line in (data_dir / "chat.jsonl").open()]
    roles = [r["role"] for r in records if r.get("kind", "message") == "message"]
    assert roles == ["user", "assistant", "user", "tool", "assistant", "user", "assistant"]
    anchor_kinds = {r["anchor_kind"] for r in records if r.get("kind") == "anchor"}
    assert {"memory/view_assembled", "memory/extract"} <= anchor_kinds

    async def stored() -> set[str]:
        plugins = {**MemoryConfig().plugins, "embedding_provider": PluginChoice(name="hashing")}
        memory = await open_memory_async(data_dir, config=MemoryConfig(plugins=plugins))
        try:
            return {claim.content for claim in memory.store.list_claims("assistant")}
        finally:
            await memory.aclose()

    assert {"The user lives in Paris.", "The user's sister is called Marta."} <= asyncio.run(
        stored()
    )


def test_a_failed_model_call_is_reported_and_the_chat_goes_on(
    chat: subprocess.CompletedProcess[str], model: ScriptedModel, tmp_path: Path
) -> None:
    """A turn whose model call fails is a thrown turn: an error line (its kind only), never
    extracted, and the next line is served."""
    assert chat.returncode == 0  # the shared chat used the whole script: now every call 404s
    result = subprocess.run(
        [
            sys.executable, str(EXAMPLE), "--base-url", model.base_url, "--model", "m",
            "--data-dir", str(tmp_path / "data"), "--embedder", "hashing",
        ],
        input="I live in Rome.\nAnd I like opera.\n",
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": API_KEY},
        timeout=120,
        check=False,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["error: the model call failed (HTTPStatusError)"] * 2
    assert API_KEY not in result.stderr
