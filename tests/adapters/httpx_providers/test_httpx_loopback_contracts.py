"""The provider contract suites against the HTTP providers and a real loopback server."""

from __future__ import annotations

import pytest
from httpx_loopback import Loopback

from memory_adapters.httpx_providers import (
    OllamaEmbedder,
    OllamaTextProvider,
    OpenAICompatibleEmbedder,
    OpenAICompatibleTextProvider,
)
from memory_contracts.providers import (
    SENTINEL_SECRET,
    EmbeddingProviderContract,
    TextProviderContract,
)


@pytest.fixture(scope="module")
def server():
    with Loopback() as loopback:
        yield loopback


def _factory(cls, base_url: str):
    return lambda: cls(base_url=base_url, model="loop-model", api_key=SENTINEL_SECRET)


class _Modes:
    provider_class: type

    @pytest.fixture
    def healthy(self, server):
        return _factory(self.provider_class, server.url)

    @pytest.fixture
    def stalling(self, server):
        return _factory(self.provider_class, f"{server.url}/stall")

    @pytest.fixture
    def failing(self, server):
        return _factory(self.provider_class, f"{server.url}/fail")


class _EmbeddingModes(_Modes, EmbeddingProviderContract):
    @pytest.fixture
    def embedding_provider_factory(self, healthy):
        return healthy

    @pytest.fixture
    def stalling_embedding_provider_factory(self, stalling):
        return stalling

    @pytest.fixture
    def failing_embedding_provider_factory(self, failing):
        return failing


class _TextModes(_Modes, TextProviderContract):
    @pytest.fixture
    def text_provider_factory(self, healthy):
        return healthy

    @pytest.fixture
    def stalling_text_provider_factory(self, stalling):
        return stalling

    @pytest.fixture
    def failing_text_provider_factory(self, failing):
        return failing


class TestOpenAICompatibleEmbedderOverLoopback(_EmbeddingModes):
    provider_class = OpenAICompatibleEmbedder


class TestOllamaEmbedderOverLoopback(_EmbeddingModes):
    provider_class = OllamaEmbedder


class TestOpenAICompatibleTextProviderOverLoopback(_TextModes):
    provider_class = OpenAICompatibleTextProvider


class TestOllamaTextProviderOverLoopback(_TextModes):
    provider_class = OllamaTextProvider
