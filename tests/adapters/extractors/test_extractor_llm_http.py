"""End to end: the llm extractor, built through the plugin registry, against a loopback
OpenAI-compatible server that this test starts (stdlib http.server in a thread)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import attrs
import pytest
from extractor_support import MakeRequest

import memory_plugins.builtin.extractors as builtin_extractors
import memory_plugins.builtin.text_providers as builtin_text_providers
from memory_adapters.clocks import MonotonicClock
from memory_adapters.extractors.llm_schema import EXTRACTION_SCHEMA
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.temporal import Precision, TemporalKind
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult, Extractor
from memory_plugins import FactoryContext, load_plugins

API_KEY = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
SCRIPTED_ANSWER = (
    "```json\n"
    + json.dumps(
        {
            "memories": [
                {
                    "content": "The user plans a trip to Lisbon on 2026-12-04.",
                    "category": "user_preference",
                    "slot": "user.trip.lisbon",
                    "temporal": {
                        "temporalKind": "plan",
                        "validFrom": "2026-12-04T00:00:00+01:00",
                        "validUntil": "2026-12-05T00:00:00+01:00",
                        "temporalPrecision": "day",
                        "temporalConfidence": 0.8,
                        "timeZone": "Europe/Berlin",
                    },
                },
                {"content": "Broken.", "temporal": {"temporalKind": "plan"}},
            ],
            "directiveSuggestions": [{"kind": "instruction", "content": "Answer in German."}],
        }
    )
    + "\n```"
)


@attrs.frozen(kw_only=True)
class ProviderContext(FactoryContext):
    """The context as the composition root builds it for the llm extractor."""

    text_provider: object = None


class _ChatServer(ThreadingHTTPServer):
    daemon_threads = True
    bodies: list[dict[str, object]]
    # The one response_format this server takes ("none": it refuses any), like local
    # servers that support one mode each; None: it takes them all.
    accepts: str | None = None


class _ChatHandler(BaseHTTPRequestHandler):
    server: _ChatServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        self.server.bodies.append({"path": self.path, **body})
        asked = body.get("response_format", {"type": "none"})["type"]
        if self.server.accepts is not None and asked != self.server.accepts:
            self._send(400, {"error": {"message": f"response_format {asked} is not supported"}})
            return
        answer = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": SCRIPTED_ANSWER},
                    "finish_reason": "stop",
                }
            ],
        }
        self._send(200, answer)

    def _send(self, status: int, document: dict[str, object]) -> None:
        data = json.dumps(document).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output clean


@pytest.fixture
def chat_server() -> Iterator[_ChatServer]:
    server = _ChatServer(("127.0.0.1", 0), _ChatHandler)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def _extract_over_http(
    base_url: str, data_dir: Path, request: ExtractionRequest
) -> ExtractionResult:
    registry = load_plugins(
        strict=True, entry_points=False, plugins=[builtin_text_providers, builtin_extractors]
    ).registry
    provider = registry.create_text_provider(
        "openai-compatible",
        FactoryContext(data_dir=data_dir, options={"base_url": base_url, "model": "local-test"}),
    )
    try:
        extractor = registry.create_extractor(
            "llm",
            ProviderContext(
                data_dir=data_dir,
                options={"text_provider": "openai-compatible"},
                text_provider=provider,
            ),
        )
        assert isinstance(extractor, Extractor)
        deadline = Deadline.after(MonotonicClock(), 10.0)
        return await extractor.extract(request, deadline=deadline, cancel=CancellationToken())
    finally:
        await provider.aclose()


def test_llm_extractor_end_to_end_over_a_loopback_openai_compatible_server(
    chat_server: _ChatServer, make_request: MakeRequest, tmp_path: Path
) -> None:
    """The whole path: registry -> HTTP provider -> prompt -> scripted JSON -> candidates;
    the secret never crosses the wire (R-PRIV-1), the malformed candidate is counted
    (R-TIME-4), the suggestion stays a suggestion (R-DIR-1)."""
    host, port = chat_server.server_address[:2]
    request = make_request(
        [
            ("user", f"I'm flying to Lisbon on Friday. My key is {API_KEY}."),
            ("assistant", "Have a good trip!"),
            ("user", "From now on, answer in German."),
        ]
    )
    result = asyncio.run(_extract_over_http(f"http://{host}:{port}", tmp_path, request))

    (sent,) = chat_server.bodies
    assert sent["path"] == "/v1/chat/completions"
    assert sent["model"] == "local-test"
    assert sent["temperature"] == 0.2
    asked = sent["response_format"]
    assert asked["type"] == "json_schema" and asked["json_schema"]["strict"] is True
    assert asked["json_schema"]["schema"] == dict(EXTRACTION_SCHEMA.schema)
    assert API_KEY not in json.dumps(sent)

    (claim,) = result.candidates
    assert claim.content == "The user plans a trip to Lisbon on 2026-12-04."
    assert (claim.temporal.kind, claim.temporal.precision) == (TemporalKind.PLAN, Precision.DAY)
    assert claim.source_entry_ids == ("m1", "m2", "m3")
    assert [s.content for s in result.suggestions] == ["Answer in German."]
    assert [reason.value for reason in result.rejected] == ["invalid-temporal"]


@pytest.mark.parametrize(
    ("accepts", "asked"),
    [
        ("json_schema", ["json_schema"]),
        ("json_object", ["json_schema", "json_object"]),
        ("none", ["json_schema", "json_object", "none"]),
    ],
)
def test_structured_output_falls_back_until_the_server_accepts_a_form(
    chat_server: _ChatServer,
    make_request: MakeRequest,
    tmp_path: Path,
    accepts: str,
    asked: list[str],
) -> None:
    """json_schema (strict) first, then json_object, then the prompt alone with tolerant
    parsing (the answer comes back fenced); the form that worked is kept for the next call."""
    chat_server.accepts = accepts
    host, port = chat_server.server_address[:2]
    request = make_request([("user", "I'm flying to Lisbon on Friday.")])

    async def twice() -> list[ExtractionResult]:
        registry = load_plugins(
            strict=True, entry_points=False, plugins=[builtin_text_providers, builtin_extractors]
        ).registry
        options = {"base_url": f"http://{host}:{port}", "model": "local-test"}
        provider = registry.create_text_provider(
            "openai-compatible", FactoryContext(data_dir=tmp_path, options=options)
        )
        extractor = registry.create_extractor(
            "llm",
            ProviderContext(
                data_dir=tmp_path,
                options={"text_provider": "openai-compatible"},
                text_provider=provider,
            ),
        )
        try:
            deadline = Deadline.after(MonotonicClock(), 10.0)
            return [
                await extractor.extract(request, deadline=deadline, cancel=CancellationToken())
                for _ in range(2)
            ]
        finally:
            await provider.aclose()

    first, second = asyncio.run(twice())
    sent = [body.get("response_format", {"type": "none"})["type"] for body in chat_server.bodies]
    assert sent == [*asked, accepts]  # the second extraction asks in the accepted form at once
    for result in (first, second):
        assert [c.content for c in result.candidates] == [
            "The user plans a trip to Lisbon on 2026-12-04."
        ]
