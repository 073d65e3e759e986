"""HTTP text providers: request shapes, JSON mode, no re-send after the request left (R-PROV-6)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from httpx_loopback import Loopback, drop, json_reply, partial, raw

from memory_adapters.clocks import MonotonicClock
from memory_adapters.httpx_providers import OllamaTextProvider, OpenAICompatibleTextProvider
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ProviderResponseError, ProviderUnavailable, ValidationError
from memory_core.ports.providers import ChatMessage, TextRequest

CLOCK = MonotonicClock()
KEY = "loop-key-3c9e77aa"
MESSAGES = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]


@pytest.fixture
def server():
    with Loopback() as loopback:
        yield loopback


def complete(provider, request: TextRequest, seconds: float = 10.0) -> str:
    async def run() -> str:
        try:
            return await provider.complete(
                request, deadline=Deadline.after(CLOCK, seconds), cancel=CancellationToken()
            )
        finally:
            await provider.aclose()

    return asyncio.run(run())


def openai(url: str, **kwargs) -> OpenAICompatibleTextProvider:
    return OpenAICompatibleTextProvider(base_url=url, model="qwen2.5", api_key=KEY, **kwargs)


def test_openai_compatible_chat_request_shape(server) -> None:
    """R-PROV-6: /v1/chat/completions with model, messages, temperature, max_tokens, and
    response_format json_object when JSON is wanted."""
    request = TextRequest(messages=MESSAGES, temperature=0.2, max_tokens=99, json_output=True)
    assert complete(openai(server.url), request) == '{"ok": true}'
    (recorded,) = server.requests
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == f"Bearer {KEY}"
    assert recorded.body == {
        "model": "qwen2.5",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
        ],
        "temperature": 0.2,
        "stream": False,
        "max_tokens": 99,
        "response_format": {"type": "json_object"},
    }


def test_openai_compatible_plain_request_has_no_response_format(server) -> None:
    assert complete(openai(server.url + "/v1"), TextRequest(messages=MESSAGES)) == "plain answer"
    body = server.requests[0].body
    assert "response_format" not in body and "max_tokens" not in body


def test_json_mode_none_leaves_json_to_the_prompt(server) -> None:
    """For servers that refuse response_format (the prompt carries the instruction)."""
    request = TextRequest(messages=MESSAGES, json_output=True)
    complete(openai(server.url, json_mode="none"), request)
    assert "response_format" not in server.requests[0].body


def test_ollama_chat_request_shape(server) -> None:
    """R-PROV-6: /api/chat, stream false, format json, options.temperature/num_predict."""
    request = TextRequest(messages=MESSAGES, temperature=0.0, max_tokens=50, json_output=True)
    provider = OllamaTextProvider(base_url=server.url, model="llama3.2")
    assert complete(provider, request) == '{"ok": true}'
    (recorded,) = server.requests
    assert recorded.path == "/api/chat"
    assert recorded.body == {
        "model": "llama3.2",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
        ],
        "stream": False,
        "options": {"temperature": 0.0, "num_predict": 50},
        "format": "json",
    }


@pytest.mark.parametrize(
    "reply",
    [drop(), partial(), json_reply({}, 503), json_reply({}, 429, Retry_After="0")],
    ids=["dropped", "mid-response", "503", "429"],
)
def test_a_chat_request_is_never_sent_twice(server, reply) -> None:
    """A completion is not idempotent: after the request left, no retry."""
    server.then(reply)
    with pytest.raises(ProviderUnavailable):
        complete(openai(server.url), TextRequest(messages=MESSAGES))
    assert len(server.requests) == 1


def test_a_chat_request_that_never_connected_is_tried_once_more() -> None:
    """Safe: a refused connection means the request never left."""
    attempts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request.url.path)
        if len(attempts) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(200, json={"message": {"content": "hello"}})

    provider = OllamaTextProvider(
        base_url="http://mock.invalid", model="m", transport=httpx.MockTransport(handler)
    )
    assert complete(provider, TextRequest(messages=MESSAGES)) == "hello"
    assert attempts == ["/api/chat", "/api/chat"]


def test_a_read_failure_after_sending_is_not_retried() -> None:
    attempts: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        raise httpx.ReadError("connection reset", request=request)

    provider = openai("http://mock.invalid", transport=httpx.MockTransport(handler))
    with pytest.raises(ProviderUnavailable, match="ReadError"):
        complete(provider, TextRequest(messages=MESSAGES))
    assert attempts == [1]


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (json_reply({"choices": []}), "'choices' is empty"),
        (json_reply({"choices": [{"message": {"content": None}}]}), "no text content"),
        (json_reply({"id": "x"}), "no 'choices'"),
        (raw("<html>gateway</html>"), "not valid JSON"),
    ],
    ids=["no-choices", "null-content", "no-field", "html"],
)
def test_an_unusable_chat_answer_is_a_response_error(server, reply, match) -> None:
    server.then(reply)
    with pytest.raises(ProviderResponseError, match=match):
        complete(openai(server.url), TextRequest(messages=MESSAGES))


def test_a_rejected_chat_names_the_status_and_hides_the_key(server) -> None:
    """R-PROV-5: the server's message is kept (redacted), the key is not."""
    server.then(json_reply({"error": {"message": f"model not found; caller {KEY}"}}, 404))
    with pytest.raises(ProviderResponseError) as caught:
        complete(openai(server.url), TextRequest(messages=MESSAGES))
    message = str(caught.value)
    assert message.startswith("openai-compatible chat: HTTP 404: model not found")
    assert KEY not in message


def test_an_unknown_json_mode_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        openai("http://h", json_mode="xml")
    assert caught.value.field == "json_mode"
