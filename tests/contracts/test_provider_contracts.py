"""The provider contract suites, run against our fakes and our HTTP providers (R-ARCH-5).

The HTTP providers run here over `httpx.MockTransport` (no sockets); the same suites run
over a real loopback server in tests/adapters/httpx_providers/test_httpx_loopback_contracts.py.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from memory_adapters.httpx_providers import (
    OllamaEmbedder,
    OllamaTextProvider,
    OpenAICompatibleEmbedder,
    OpenAICompatibleTextProvider,
)
from memory_adapters.provider_guard import GuardedEmbeddingProvider, GuardedTextProvider
from memory_contracts.fake_providers import STALL, FakeEmbeddingProvider, ScriptedTextProvider
from memory_contracts.providers import (
    SENTINEL_SECRET,
    EmbeddingProviderContract,
    TextProviderContract,
)
from memory_core.domain.errors import ProviderUnavailable

VECTORS = FakeEmbeddingProvider(dim=12)  # the mock servers' deterministic "model"


# --- fakes ---------------------------------------------------------------------------------
class TestFakeEmbeddingProviderContract(EmbeddingProviderContract):
    @pytest.fixture
    def embedding_provider_factory(self):
        return lambda: FakeEmbeddingProvider(api_key=SENTINEL_SECRET)

    @pytest.fixture
    def stalling_embedding_provider_factory(self):
        def make():
            fake = FakeEmbeddingProvider(api_key=SENTINEL_SECRET)
            fake.fail_next(STALL)
            return fake

        return make

    @pytest.fixture
    def failing_embedding_provider_factory(self):
        return lambda: FakeEmbeddingProvider(
            api_key=SENTINEL_SECRET, failure=ProviderUnavailable("fake: down")
        )


class TestScriptedTextProviderContract(TextProviderContract):
    @pytest.fixture
    def text_provider_factory(self):
        return lambda: ScriptedTextProvider(default='{"ok": true}', api_key=SENTINEL_SECRET)

    @pytest.fixture
    def stalling_text_provider_factory(self):
        return lambda: ScriptedTextProvider([STALL], api_key=SENTINEL_SECRET)

    @pytest.fixture
    def failing_text_provider_factory(self):
        return lambda: ScriptedTextProvider(
            [ProviderUnavailable("scripted: down")], api_key=SENTINEL_SECRET
        )


# --- HTTP providers over MockTransport ------------------------------------------------------
def _json(body: object, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json=body)


async def _healthy(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    path = request.url.path
    if path.endswith("/v1/embeddings"):
        data = [
            {"index": i, "embedding": list(VECTORS.vector(text))}
            for i, text in enumerate(body["input"])
        ]
        return _json({"object": "list", "data": data[::-1]})  # out of order: index decides
    if path.endswith("/api/embed"):
        return _json({"embeddings": [list(VECTORS.vector(text)) for text in body["input"]]})
    if path.endswith("/v1/chat/completions"):
        assert body["response_format"] == {"type": "json_object"}
        return _json({"choices": [{"message": {"role": "assistant", "content": '{"ok": true}'}}]})
    if path.endswith("/api/chat"):
        assert body["format"] == "json" and body["stream"] is False
        return _json({"message": {"role": "assistant", "content": '{"ok": true}'}, "done": True})
    return _json({"error": "not found"}, 404)


async def _stalling(request: httpx.Request) -> httpx.Response:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def _failing(request: httpx.Request) -> httpx.Response:
    # A careless server quoting the caller's key back in its error, bare, so that no
    # pattern-based redaction would recognise it: the provider must scrub its own key.
    echoed = request.headers.get("authorization", "").removeprefix("Bearer ")
    return _json({"error": {"message": f"internal error for caller {echoed}"}}, 500)


def _mock(cls, handler, base_url):
    return lambda: cls(
        base_url=base_url,
        model="mock-model",
        api_key=SENTINEL_SECRET,
        transport=httpx.MockTransport(handler),
    )


OPENAI = "http://mock.invalid:8000"  # without /v1: the provider adds it
OLLAMA = "http://mock.invalid:11434"


class TestOpenAICompatibleEmbedderContract(EmbeddingProviderContract):
    @pytest.fixture
    def embedding_provider_factory(self):
        return _mock(OpenAICompatibleEmbedder, _healthy, OPENAI)

    @pytest.fixture
    def stalling_embedding_provider_factory(self):
        return _mock(OpenAICompatibleEmbedder, _stalling, OPENAI)

    @pytest.fixture
    def failing_embedding_provider_factory(self):
        return _mock(OpenAICompatibleEmbedder, _failing, OPENAI)


class TestOllamaEmbedderContract(EmbeddingProviderContract):
    @pytest.fixture
    def embedding_provider_factory(self):
        return _mock(OllamaEmbedder, _healthy, OLLAMA)

    @pytest.fixture
    def stalling_embedding_provider_factory(self):
        return _mock(OllamaEmbedder, _stalling, OLLAMA)

    @pytest.fixture
    def failing_embedding_provider_factory(self):
        return _mock(OllamaEmbedder, _failing, OLLAMA)


class TestOpenAICompatibleTextProviderContract(TextProviderContract):
    @pytest.fixture
    def text_provider_factory(self):
        return _mock(OpenAICompatibleTextProvider, _healthy, OPENAI + "/v1")

    @pytest.fixture
    def stalling_text_provider_factory(self):
        return _mock(OpenAICompatibleTextProvider, _stalling, OPENAI)

    @pytest.fixture
    def failing_text_provider_factory(self):
        return _mock(OpenAICompatibleTextProvider, _failing, OPENAI)


class TestOllamaTextProviderContract(TextProviderContract):
    @pytest.fixture
    def text_provider_factory(self):
        return _mock(OllamaTextProvider, _healthy, OLLAMA)

    @pytest.fixture
    def stalling_text_provider_factory(self):
        return _mock(OllamaTextProvider, _stalling, OLLAMA)

    @pytest.fixture
    def failing_text_provider_factory(self):
        return _mock(OllamaTextProvider, _failing, OLLAMA)


# --- the guard keeps even a deaf provider inside the contract -------------------------------
class DeafEmbedder(FakeEmbeddingProvider):
    """Ignores its deadline and token entirely while stalled (a careless third party)."""

    def __init__(self, *, stall: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._stall = stall

    async def embed(self, texts, *, purpose, deadline, cancel):
        if self._stall:
            await asyncio.Event().wait()
        return await super().embed(texts, purpose=purpose, deadline=deadline, cancel=cancel)


class DeafText(ScriptedTextProvider):
    def __init__(self, *, stall: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._stall = stall

    async def complete(self, request, *, deadline, cancel):
        if self._stall:
            await asyncio.Event().wait()
        return await super().complete(request, deadline=deadline, cancel=cancel)


class TestGuardedDeafEmbedderContract(EmbeddingProviderContract):
    """R-ARCH-6: wrapped in the guard, a provider that ignores its deadline still passes."""

    @pytest.fixture
    def embedding_provider_factory(self):
        return lambda: GuardedEmbeddingProvider(DeafEmbedder(api_key=SENTINEL_SECRET))

    @pytest.fixture
    def stalling_embedding_provider_factory(self):
        return lambda: GuardedEmbeddingProvider(
            DeafEmbedder(stall=True, api_key=SENTINEL_SECRET), grace_seconds=0.05
        )

    @pytest.fixture
    def failing_embedding_provider_factory(self):
        # A raw library exception quoting the key: the guard must type it and drop the text.
        leak = RuntimeError(f"401 for key {SENTINEL_SECRET}")
        return lambda: GuardedEmbeddingProvider(DeafEmbedder(api_key=SENTINEL_SECRET, failure=leak))


class TestGuardedDeafTextProviderContract(TextProviderContract):
    """R-ARCH-6: wrapped in the guard, a text provider that ignores its token still passes."""

    @pytest.fixture
    def text_provider_factory(self):
        return lambda: GuardedTextProvider(DeafText(default='{"ok": 1}', api_key=SENTINEL_SECRET))

    @pytest.fixture
    def stalling_text_provider_factory(self):
        return lambda: GuardedTextProvider(
            DeafText(stall=True, api_key=SENTINEL_SECRET), grace_seconds=0.05
        )

    @pytest.fixture
    def failing_text_provider_factory(self):
        leak = ConnectionError(f"refused for key {SENTINEL_SECRET}")
        return lambda: GuardedTextProvider(DeafText(responses=[leak], api_key=SENTINEL_SECRET))
