"""Serving an MCP server over stdio or streamable HTTP, until the client or a signal ends it.

HTTP binds loopback unless the operator says otherwise (the server has no authentication,
so anything that can reach the port can use the memory); on loopback the SDK's DNS-rebinding
protection checks the Host and Origin headers. The socket is bound before serving, so
`--port 0` works and the URL announced is the one actually listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import signal
import socket
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server

from memory_core.domain.errors import ConfigError

__all__ = ["check_host", "serve_http", "serve_stdio"]

# One JSON-RPC message is one line; a tool call's arguments are a few KiB at most (the
# schemas cap every text), so this bounds a runaway line without refusing a real one.
_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def check_host(host: str, *, allow_remote: bool) -> None:
    """Refuse a non-loopback address unless the operator allowed it explicitly."""
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not allow_remote:
        raise ConfigError(
            f"--host {host} is not a loopback address: the MCP server has no authentication, "
            "so anyone who reaches the port reads and writes this memory (pass --allow-remote "
            "to accept that, e.g. behind an authenticating proxy)"
        )


async def serve_stdio(server: Server[Any]) -> None:
    """Until the client closes stdin, or SIGTERM (after which this returns normally, so the
    caller closes memory instead of the process dying mid-write)."""

    async def run() -> None:
        async with _stdin_lines() as lines, stdio_server(stdin=lines) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    await _until_terminated(run)


class _Lines:
    """stdin as async lines read on the event loop. The SDK's own reader blocks in a worker
    thread, and a cancellation (SIGTERM) waits for that read to return — forever, while the
    client keeps the pipe open."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


@contextlib.asynccontextmanager
async def _stdin_lines() -> AsyncIterator[Any]:
    """A pipe or a socket (what MCP clients give) read on the loop; anything else (a file,
    /dev/null, which epoll refuses) None, for the SDK's own reader."""
    mode = os.fstat(sys.stdin.fileno()).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        yield None
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_MAX_MESSAGE_BYTES)
    pipe = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    with contextlib.closing(transport):
        yield _Lines(reader)


async def serve_http(
    server: Server[Any], *, host: str, port: int, path: str, announce: Callable[[str], None]
) -> None:
    """Streamable HTTP at `http://host:port/path` until SIGINT or SIGTERM (uvicorn's own
    graceful shutdown); `announce` hears the URL once the socket is bound."""
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.create_server((host, port), family=family) as sock:
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        announce(f"http://{shown}:{sock.getsockname()[1]}{path}")
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        await _Uvicorn(config).serve(sockets=[sock])


class _Uvicorn(uvicorn.Server):
    """uvicorn, minus re-raising the signal after its graceful shutdown: that would end the
    process before the caller closes memory. A signal stops serving; a second SIGINT forces
    it, as in uvicorn."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stop)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    def _stop(self) -> None:
        self.force_exit = self.should_exit
        self.should_exit = True


async def _until_terminated(work: Callable[[], Awaitable[None]]) -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work())
    terminated = False

    def terminate() -> None:
        nonlocal terminated
        terminated = True
        task.cancel()

    loop.add_signal_handler(signal.SIGTERM, terminate)
    try:
        await task
    except asyncio.CancelledError:
        if not terminated:
            raise
    finally:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGTERM)
