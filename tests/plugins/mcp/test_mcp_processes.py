"""`agent-memory mcp` as a process, driven by the SDK's own client (R-HOST-2).

Over stdio (the client spawns `agent-memory mcp --agent A --data-dir D`) and over
streamable HTTP on loopback: list the tools, remember, recall, forget, a refused user-level
call. A second server process on the same data dir sees what the first stored after it
exited, and none starts while another holds the directory (the data-dir lock).
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

AGENT = "A"
DEADLINE_SECONDS = 90  # several interpreter start-ups on a loaded machine
HASHING = '[plugins.embedding_provider]\nname = "hashing"\n'
# The console script installed next to this interpreter: the command users configure.
COMMAND = str(Path(sys.executable).parent / "agent-memory")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(HASHING, encoding="utf-8")
    return path


def _args(config: Path, data_dir: Path, *extra: str) -> list[str]:
    return ["--config", str(config), "mcp", "--agent", AGENT, "--data-dir", str(data_dir), *extra]


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert result.is_error is (not result.structured_content["ok"])
    return result.structured_content


async def first_session(client: Client) -> dict[str, str]:
    """Remember two facts, recall one, forget the other, be refused a user-level call."""
    names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["memory_remember", "memory_recall", "memory_forget"]
    kept = await call(client, "memory_remember", {"content": "The user prefers green tea."})
    dropped = await call(client, "memory_remember", {"content": "The user owns a red bike."})
    assert kept["status"] == dropped["status"] == "stored"

    found = await call(client, "memory_recall", {"query": "green tea", "top_k": None})
    assert found["memories"][0]["id"] == kept["id"]
    forgot = await call(client, "memory_forget", {"memory_id": dropped["id"]})
    assert forgot["status"] == "archived" and forgot["recoverable"] is True
    refused = await call(client, "user_memory_delete", {"memory_id": kept["id"]})
    assert refused["status"] == "user_tool_not_enabled"
    return {"kept": kept["id"], "dropped": dropped["id"]}


async def recalled_ids(client: Client, query: str) -> list[str]:
    return [m["id"] for m in (await call(client, "memory_recall", {"query": query}))["memories"]]


def test_over_stdio_a_second_process_sees_the_first_ones_data(tmp_path: Path, config: Path) -> None:
    data_dir = tmp_path / "data"
    server = StdioServerParameters(command=COMMAND, args=_args(config, data_dir))

    async def go() -> None:
        async with asyncio.timeout(DEADLINE_SECONDS):
            async with Client(server) as client:
                ids = await first_session(client)
            # The first server has exited (the client waited for it); a new one opens.
            async with Client(server) as client:
                assert await recalled_ids(client, "green tea") == [ids["kept"]]
                assert ids["dropped"] not in await recalled_ids(client, "red bike")

    asyncio.run(go())


class HttpServer:
    """`agent-memory mcp --transport http --port 0` as a child process of this test."""

    def __init__(self, config: Path, data_dir: Path) -> None:
        self.process = subprocess.Popen(
            [COMMAND, *_args(config, data_dir, "--transport", "http", "--port", "0")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.put(line)

    def url(self) -> str:
        while True:
            line = self._lines.get(timeout=DEADLINE_SECONDS)
            found = re.search(r"serving on (http://127\.0\.0\.1:\d+/mcp)", line)
            if found:
                return found.group(1)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=DEADLINE_SECONDS)


@pytest.fixture
def http_server(tmp_path: Path, config: Path) -> Iterator[HttpServer]:
    server = HttpServer(config, tmp_path / "data")
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait(timeout=DEADLINE_SECONDS)


def test_over_http_on_loopback_with_one_server_per_data_dir(
    tmp_path: Path, config: Path, http_server: HttpServer
) -> None:
    url = http_server.url()

    async def go() -> None:
        async with asyncio.timeout(DEADLINE_SECONDS), Client(url) as client:
            ids = await first_session(client)
            assert await recalled_ids(client, "green tea") == [ids["kept"]]

    asyncio.run(go())

    second = subprocess.run(
        [COMMAND, *_args(config, tmp_path / "data")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE_SECONDS,
    )
    assert second.returncode == 2
    assert f"in use by process {http_server.process.pid}" in second.stderr
    assert http_server.stop() == 0  # SIGTERM is a graceful shutdown


def test_sigterm_stops_a_stdio_server_gracefully(tmp_path: Path, config: Path) -> None:
    """A client that keeps stdin open and sends SIGTERM (as a desktop assistant quitting
    may) gets exit 0: memory closed, the data-dir lock released for the next server."""
    command = [COMMAND, *_args(config, tmp_path / "data")]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}  # fmt: skip
        process.stdin.write((json.dumps(initialize) + "\n").encode())
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())  # serving: the handler is installed
        assert answer["result"]["serverInfo"]["name"] == "agent-memory"

        process.send_signal(signal.SIGTERM)

        assert process.wait(timeout=DEADLINE_SECONDS) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE_SECONDS)
    reopened = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, timeout=DEADLINE_SECONDS
    )
    assert reopened.returncode == 0, reopened.stderr  # EOF at once: opened, served, closed
