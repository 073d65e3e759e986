"""First-party text-provider registrations: "openai-compatible" and "ollama".

- "openai-compatible": `POST /v1/chat/completions` (OpenAI, vLLM, llama.cpp server, LM Studio);
  `json_mode = "auto"` asks for `json_schema` (strict), then `json_object`, then leaves JSON
  to the prompt, as the server accepts; `"none"` for servers that mishandle `response_format`;
- "ollama": `POST /api/chat` (stream off, `format: json` when JSON is wanted).

Both factories are `http_factories.http_factory`: they validate `[plugins.text_provider.options]`
and raise ConfigError naming the option; they return the bare provider (the composition root
wraps it in the provider guard).
Registered through the `agent_memory` entry-point group like any third-party plugin (R-ARCH-3).
"""

from __future__ import annotations

from typing import Literal

import attrs

from memory_core.settings import MemorySettings
from memory_plugins.builtin.http_factories import DEFAULT_OLLAMA_URL, http_factory
from memory_plugins.hookspecs import Register, hookimpl

__all__ = [
    "OllamaTextOptions",
    "OpenAICompatibleTextOptions",
    "agent_memory_register_text_providers",
]

FAMILY = "text_provider"


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


def _text_answer_limit(settings: MemorySettings) -> int:
    return settings.text_response_max_bytes


def _json_mode(options: OpenAICompatibleTextOptions) -> dict[str, object]:
    return {"json_mode": options.json_mode}


_make_openai_compatible = http_factory(
    FAMILY,
    OpenAICompatibleTextOptions,
    "OpenAICompatibleTextProvider",
    max_response_bytes=_text_answer_limit,
    extra=_json_mode,
)
_make_ollama = http_factory(
    FAMILY, OllamaTextOptions, "OllamaTextProvider", max_response_bytes=_text_answer_limit
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
