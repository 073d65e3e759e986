"""First-party embedding-provider registrations.

- "openai-compatible": any server speaking `POST /v1/embeddings` (OpenAI, vLLM, llama.cpp
  server, LM Studio);
- "ollama": a local or remote Ollama (`POST /api/embed`);
- "local-minilm": the embedded default, all-MiniLM-L6-v2 int8 on onnxruntime, offline;
- "hashing": a deterministic lexical embedder with no model (tests, weak fallback).

Each family of embedders has its own options class and factory below (the HTTP ones built
by `http_factories.http_factory`), and one `register` call in
`agent_memory_register_embedding_providers`; adding an embedder is adding those three things.
Factories validate their `[plugins.embedding_provider.options]` and raise ConfigError naming
the option; they return the bare provider (the composition root wraps it in the
provider guard). Registered through the `agent_memory` entry-point group like any
third-party plugin (R-ARCH-3).
"""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.ports.providers import EmbeddingProvider
from memory_core.settings import MemorySettings
from memory_plugins.builtin.http_factories import DEFAULT_OLLAMA_URL, http_factory
from memory_plugins.config import build_from_options, structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = [
    "HashingEmbedderOptions",
    "LocalMiniLMOptions",
    "OllamaEmbedderOptions",
    "OpenAICompatibleEmbedderOptions",
    "agent_memory_register_embedding_providers",
]

FAMILY = "embedding_provider"


# --- HTTP embedders -----------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class OpenAICompatibleEmbedderOptions:
    """`[plugins.embedding_provider.options]` of "openai-compatible"."""

    base_url: str  # with or without the trailing /v1
    model: str
    api_key_env: str | None = None  # name of the environment variable holding the key
    api_key: str | None = None  # prefer api_key_env: a config file is easily shared
    dimensions: int | None = None  # ask for shortened vectors (models that support it)
    timeout_seconds: float | None = None  # cap per request, below the gateway's deadline
    max_connections: int = 8


@attrs.frozen(kw_only=True)
class OllamaEmbedderOptions:
    """`[plugins.embedding_provider.options]` of "ollama"."""

    model: str
    base_url: str = DEFAULT_OLLAMA_URL
    api_key_env: str | None = None  # for an Ollama behind an authenticating proxy
    api_key: str | None = None
    dimensions: int | None = None
    timeout_seconds: float | None = None
    max_connections: int = 8


def _embedding_answer_limit(settings: MemorySettings) -> int:
    return settings.embedding_response_max_bytes


def _dimensions(
    options: OpenAICompatibleEmbedderOptions | OllamaEmbedderOptions,
) -> dict[str, object]:
    return {"dimensions": options.dimensions}


_make_openai_compatible = http_factory(
    FAMILY,
    OpenAICompatibleEmbedderOptions,
    "OpenAICompatibleEmbedder",
    max_response_bytes=_embedding_answer_limit,
    extra=_dimensions,
)
_make_ollama = http_factory(
    FAMILY,
    OllamaEmbedderOptions,
    "OllamaEmbedder",
    max_response_bytes=_embedding_answer_limit,
    extra=_dimensions,
)


# --- offline embedders ---------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class LocalMiniLMOptions:
    """`[plugins.embedding_provider.options]` of "local-minilm"."""

    threads: int = 2  # model runs side by side, one core each
    batch_size: int = 8  # windows per run


@attrs.frozen(kw_only=True)
class HashingEmbedderOptions:
    """`[plugins.embedding_provider.options]` of "hashing"."""

    dimensions: int = 256


def _make_local_minilm(context: FactoryContext) -> EmbeddingProvider:
    from memory_adapters.local_embedder import MiniLMEmbedder

    options = structure_options(context.options, LocalMiniLMOptions, family=FAMILY)
    if options.threads < 1 or options.batch_size < 1:
        raise ConfigError(f"plugins.{FAMILY}.options: threads and batch_size must be >= 1")
    return MiniLMEmbedder(threads=options.threads, batch_size=options.batch_size)


def _make_hashing(context: FactoryContext) -> EmbeddingProvider:
    from memory_adapters.local_embedder import HashingEmbedder

    options = structure_options(context.options, HashingEmbedderOptions, family=FAMILY)
    return build_from_options(lambda: HashingEmbedder(dimensions=options.dimensions), family=FAMILY)


# --- registration ---------------------------------------------------------------------------
@hookimpl
def agent_memory_register_embedding_providers(register: Register) -> None:
    register(
        "openai-compatible",
        _make_openai_compatible,
        description="OpenAI-compatible /v1/embeddings (OpenAI, vLLM, llama.cpp, LM Studio).",
        capabilities=("network",),
    )
    register(
        "ollama",
        _make_ollama,
        description="Ollama /api/embed.",
        capabilities=("network",),
    )
    register(
        "local-minilm",
        _make_local_minilm,
        description="all-MiniLM-L6-v2 int8 ONNX, offline (the embedded default).",
        capabilities=("offline",),
    )
    register(
        "hashing",
        _make_hashing,
        description="Deterministic feature-hashing embedder; lexical, no model.",
        capabilities=("offline", "deterministic"),
    )
