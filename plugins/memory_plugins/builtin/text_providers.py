"""First-party text-provider registrations: "openai-compatible" and "ollama".

- "openai-compatible": `POST /v1/chat/completions` (OpenAI, vLLM, llama.cpp server, LM Studio);
  `json_mode = "auto"` asks for `json_schema` (strict), then `json_object`, then leaves JSON
  to the prompt, as the server accepts; `"none"` for servers that mishandle `response_format`;
- "ollama": `POST /api/chat` (stream off, `format: json` when JSON is wanted).

Factories validate `[plugins.text_provider.options]` and raise ConfigError naming the option;
they return the bare provider (the composition root wraps it in the provider guard).
Registered through the `agent_memory` entry-point group like any third-party plugin (R-ARCH-3).
"""

from __future__ import annotations

from typing import Literal, TypeVar

import attrs

from memory_core.ports.providers import TextProvider
from memory_plugins.builtin.embedders import DEFAULT_OLLAMA_URL
from memory_plugins.config import build_from_options, structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = [
    "OllamaTextOptions",
    "OpenAICompatibleTextOptions",
    "agent_memory_register_text_providers",
]

FAMILY = "text_provider"
T = TypeVar("T")


@attrs.frozen(kw_only=True)
class OpenAICompatibleTextOptions:
    """`[plugins.text_provider.options]` of "openai-compatible"."""

    base_url: str  # with or without the trailing /v1
    model: str
    api_key_env: str | None = None  # name of the environment variable holding the key
    api_key: str | None = None  # prefer api_key_env: a config file is easily shared
    # auto: json_schema (strict), falling back to json_object, then to the prompt alone
    json_mode: Literal["auto", "json_schema", "json_object", "none"] = "auto"
    timeout_seconds: float | None = None  # cap per request, below the gateway's deadline
    max_connections: int = 4


@attrs.frozen(kw_only=True)
class OllamaTextOptions:
    """`[plugins.text_provider.options]` of "ollama"."""

    model: str
    base_url: str = DEFAULT_OLLAMA_URL
    api_key_env: str | None = None  # for an Ollama behind an authenticating proxy
    api_key: str | None = None
    timeout_seconds: float | None = None
    max_connections: int = 4


def _make_openai_compatible(context: FactoryContext) -> TextProvider:
    from memory_adapters.httpx_providers import OpenAICompatibleTextProvider, resolve_api_key

    options = structure_options(context.options, OpenAICompatibleTextOptions, family=FAMILY)
    return build_from_options(
        lambda: OpenAICompatibleTextProvider(
            base_url=options.base_url,
            model=options.model,
            api_key=resolve_api_key(options.api_key, options.api_key_env),
            json_mode=options.json_mode,
            timeout_cap=options.timeout_seconds,
            max_connections=options.max_connections,
            max_response_bytes=context.settings.text_response_max_bytes,
        ),
        family=FAMILY,
    )


def _make_ollama(context: FactoryContext) -> TextProvider:
    from memory_adapters.httpx_providers import OllamaTextProvider, resolve_api_key

    options = structure_options(context.options, OllamaTextOptions, family=FAMILY)
    return build_from_options(
        lambda: OllamaTextProvider(
            base_url=options.base_url,
            model=options.model,
            api_key=resolve_api_key(options.api_key, options.api_key_env),
            timeout_cap=options.timeout_seconds,
            max_connections=options.max_connections,
            max_response_bytes=context.settings.text_response_max_bytes,
        ),
        family=FAMILY,
    )


@hookimpl
def agent_memory_register_text_providers(register: Register) -> None:
    register(
        "openai-compatible",
        _make_openai_compatible,
        description="OpenAI-compatible /v1/chat/completions (OpenAI, vLLM, llama.cpp, LM Studio).",
        capabilities=("network", "json"),
    )
    register(
        "ollama",
        _make_ollama,
        description="Ollama /api/chat.",
        capabilities=("network", "json"),
    )
