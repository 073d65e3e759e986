"""HTTP embedding and text providers: OpenAI-compatible servers and Ollama (R-PROV-6).

Each provider holds one pooled `httpx.AsyncClient`, turns its deadline into request timeouts
and an asyncio deadline, stops when its token is cancelled, retries only where that is safe,
and raises the core's typed errors with messages free of keys and URLs (R-PROV-5). Answers
are streamed under a byte cap and large ones parsed off the event loop (R-READ-1). A provider
belongs to the event loop it is first used on.
"""

from __future__ import annotations

from memory_adapters.httpx_providers.credentials import ApiKey, resolve_api_key
from memory_adapters.httpx_providers.errors import ProviderResponseTooLarge
from memory_adapters.httpx_providers.ollama import (
    DEFAULT_OLLAMA_URL,
    OllamaEmbedder,
    OllamaTextProvider,
)
from memory_adapters.httpx_providers.openai_compatible import (
    OpenAICompatibleEmbedder,
    OpenAICompatibleTextProvider,
)

__all__ = [
    "DEFAULT_OLLAMA_URL",
    "ApiKey",
    "OllamaEmbedder",
    "OllamaTextProvider",
    "OpenAICompatibleEmbedder",
    "OpenAICompatibleTextProvider",
    "ProviderResponseTooLarge",
    "resolve_api_key",
]
