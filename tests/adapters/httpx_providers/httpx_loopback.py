"""A real HTTP/1.1 server on 127.0.0.1 (ephemeral port) speaking the OpenAI and Ollama shapes.

Tests script its replies: `server.then(reply, ...)` queues replies for the next requests;
with the queue empty it answers like a healthy server. A path prefix picks a standing mode
for the contract suites: `/stall/...` never answers (until the server stops), `/fail/...`
answers 500 quoting the caller's bare key back. Every request is recorded.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

from memory_contracts.fake_providers import FakeEmbeddingProvider

__all__ = ["Loopback", "Recorded", "Reply", "drop", "json_reply", "partial", "stall"]

VECTORS = FakeEmbeddingProvider(dim=12)


@attrs.frozen(kw_only=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    client_port: int


@attrs.frozen(kw_only=True)
class Reply:
    kind: str  # json | raw | drop | partial | stall
    status: int = 200
    body: Any = None
    headers: dict[str, str] = attrs.field(factory=dict)


def json_reply(body: Any, status: int = 200, **headers: str) -> Reply:
    return Reply(kind="json", status=status, body=body, headers=headers)


def raw(text: str, status: int = 200) -> Reply:
    return Reply(kind="raw", status=status, body=text)


def drop() -> Reply:
    """Close the socket without answering."""
    return Reply(kind="drop")


def partial() -> Reply:
    """Send headers promising 1000 bytes and a few of them, then close the socket."""
    return Reply(kind="partial")


def stall() -> Reply:
    return Reply(kind="stall")


def healthy(path: str, body: Any) -> Reply:
    if path.endswith("/v1/embeddings"):
        data = [
            {"object": "embedding", "index": i, "embedding": list(VECTORS.vector(text))}
            for i, text in enumerate(body["input"])
        ]
        return json_reply({"object": "list", "data": data, "model": body["model"]})
    if path.endswith("/api/embed"):
        vectors = [list(VECTORS.vector(text)) for text in body["input"]]
        return json_reply({"model": body["model"], "embeddings": vectors})
    if path.endswith("/v1/chat/completions"):
        content = '{"ok": true}' if "response_format" in body else "plain answer"
        return json_reply(
            {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        )
    if path.endswith("/api/chat"):
        content = '{"ok": true}' if body.get("format") == "json" else "plain answer"
        return json_reply({"message": {"role": "assistant", "content": content}, "done": True})
    return json_reply({"error": "no such route"}, 404)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection pooling is observable
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        text = self.rfile.read(length).decode()
        try:
            body = json.loads(text)
        except ValueError:
            body = text
        loopback = self.server.loopback
        loopback.record(
            Recorded(
                method="POST",
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                client_port=self.client_address[1],
            )
        )
        reply = loopback.next_reply(self.path, body, self.headers.get("authorization", ""))
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        if reply.kind == "stall":
            self.server.loopback.release.wait(timeout=30)
            self.close_connection = True
            return
        if reply.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.kind == "partial":
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"data": [{"embedding": [0.1,'
            )
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        payload = (
            json.dumps(reply.body).encode() if reply.kind == "json" else str(reply.body).encode()
        )
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    loopback: Loopback


class Loopback:
    """Use as a context manager; `url` is `http://127.0.0.1:<port>`."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.loopback = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._lock = threading.Lock()
        self._script: deque[Reply | Callable[[str, Any], Reply]] = deque()
        self.requests: list[Recorded] = []
        self.release = threading.Event()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def then(self, *replies: Reply | Callable[[str, Any], Reply]) -> Loopback:
        with self._lock:
            self._script.extend(replies)
        return self

    def record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)

    def next_reply(self, path: str, body: Any, authorization: str) -> Reply:
        if path.startswith("/stall/"):
            return stall()
        if path.startswith("/fail/"):
            bare = authorization.removeprefix("Bearer ")
            return json_reply({"error": {"message": f"internal error for caller {bare}"}}, 500)
        with self._lock:
            step = self._script.popleft() if self._script else None
        if step is None:
            return healthy(path, body)
        return step(path, body) if callable(step) else step

    def __enter__(self) -> Loopback:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
