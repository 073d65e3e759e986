"""The HTTP providers registered through the plugin host, options validated by name (R-ARCH-3).

(Kept beside the adapter tests: these check the thin builtin modules that build them.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from httpx_loopback import Loopback

from memory_adapters.clocks import MonotonicClock
from memory_adapters.httpx_providers import (
    OllamaEmbedder,
    OllamaTextProvider,
    OpenAICompatibleEmbedder,
    OpenAICompatibleTextProvider,
)
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import EmbeddingPurpose
from memory_plugins.builtin import embedders, text_providers
from memory_plugins.context import FactoryContext
from memory_plugins.errors import PluginLoadError
from memory_plugins.loader import load_plugins

SECRET = "reg-secret-5e2a91"


@pytest.fixture(scope="module")
def registry():
    return load_plugins(
        strict=True, entry_points=False, plugins=[embedders, text_providers]
    ).registry


@pytest.fixture(autouse=True)
def _unset_variable(monkeypatch) -> None:
    monkeypatch.delenv("AM_UNSET_VARIABLE_X", raising=False)


def _context(tmp_path: Path, **options) -> FactoryContext:
    return FactoryContext(data_dir=tmp_path, options=options)


def test_both_http_families_are_registered(registry) -> None:
    """R-PROV-6, R-ARCH-3: chosen by name from config like any plugin."""
    assert {"openai-compatible", "ollama"} <= set(registry.names("embedding_provider"))
    assert {"openai-compatible", "ollama"} <= set(registry.names("text_provider"))


def test_factories_build_the_providers_from_options(registry, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AM_TEST_KEY", SECRET)
    embedder = registry.create_embedding_provider(
        "openai-compatible",
        _context(tmp_path, base_url="http://h:8000", model="bge", api_key_env="AM_TEST_KEY"),
    )
    assert isinstance(embedder, OpenAICompatibleEmbedder) and embedder.model_id == "bge"
    assert SECRET not in repr(embedder)
    ollama = registry.create_embedding_provider("ollama", _context(tmp_path, model="nomic"))
    assert isinstance(ollama, OllamaEmbedder) and "11434" in repr(ollama)
    text = registry.create_text_provider(
        "openai-compatible",
        _context(tmp_path, base_url="http://h/v1", model="qwen", json_mode="none"),
    )
    assert isinstance(text, OpenAICompatibleTextProvider)
    assert isinstance(
        registry.create_text_provider("ollama", _context(tmp_path, model="llama3.2")),
        OllamaTextProvider,
    )


def test_the_key_from_the_environment_is_sent(registry, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AM_TEST_KEY", SECRET)
    with Loopback() as server:
        embedder = registry.create_embedding_provider(
            "openai-compatible",
            _context(tmp_path, base_url=server.url, model="bge", api_key_env="AM_TEST_KEY"),
        )

        async def run():
            try:
                await embedder.embed(
                    ["x"],
                    purpose=EmbeddingPurpose.BATCH,
                    deadline=Deadline.after(MonotonicClock(), 5),
                    cancel=CancellationToken(),
                )
            finally:
                await embedder.aclose()

        asyncio.run(run())
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


@pytest.mark.parametrize(
    ("plugin", "options", "message"),
    [
        (
            ("embedding_provider", "openai-compatible"),
            {"model": "m"},
            "plugins.embedding_provider.options.base_url: required key missing",
        ),
        (
            ("embedding_provider", "ollama"),
            {"model": "m", "base_url": "localhost:11434"},
            "plugins.embedding_provider.options.base_url: must be an http(s) URL with a host",
        ),
        (
            ("embedding_provider", "ollama"),
            {"model": "m", "dimensions": 0},
            "plugins.embedding_provider.options.dimensions: must be a positive integer",
        ),
        (
            ("embedding_provider", "openai-compatible"),
            {"base_url": "http://h", "model": "m", "api_key_env": "AM_UNSET_VARIABLE_X"},
            "plugins.embedding_provider.options.api_key_env: environment variable "
            "'AM_UNSET_VARIABLE_X' is not set",
        ),
        (
            ("embedding_provider", "ollama"),
            {"model": "m", "modle": "x"},
            "plugins.embedding_provider.options.modle: unknown key",
        ),
        (
            ("text_provider", "openai-compatible"),
            {"base_url": "http://h", "model": "m", "json_mode": "schema"},
            "plugins.text_provider.options.json_mode: must be one of",
        ),
        (
            ("text_provider", "ollama"),
            {"model": "m", "timeout_seconds": -1.0},
            "plugins.text_provider.options.timeout_seconds: must be positive",
        ),
    ],
    ids=["missing", "url", "dimensions", "env", "typo", "json-mode", "timeout"],
)
def test_bad_options_are_config_errors_naming_the_option(
    registry, tmp_path, plugin, options, message
) -> None:
    with pytest.raises(PluginLoadError) as caught:
        registry.create(*plugin, _context(tmp_path, **options))
    assert message in str(caught.value)
    assert "ConfigError" in str(caught.value)


def test_a_literal_key_in_options_never_appears_in_an_error(registry, tmp_path) -> None:
    """R-PROV-5: even when the key sits in the config, a bad option error does not quote it."""
    with pytest.raises(PluginLoadError) as caught:
        registry.create(
            "embedding_provider",
            "openai-compatible",
            _context(tmp_path, base_url="http://h", model="m", api_key=f"{SECRET}\nX-Evil: 1"),
        )
    assert "plugins.embedding_provider.options.api_key:" in str(caught.value)
    assert SECRET not in str(caught.value)
