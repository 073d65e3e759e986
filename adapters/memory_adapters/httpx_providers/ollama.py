"""Ollama providers: `POST {base}/api/embed` and `POST {base}/api/chat` (R-PROV-6).

The base URL is the server root (`http://localhost:11434`); a trailing `/api` is accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from memory_adapters.httpx_providers.base import (
    HttpEmbedder,
    HttpTextProvider,
    field,
    messages_payload,
)
from memory_adapters.httpx_providers.errors import malformed
from memory_adapters.httpx_providers.http import validate_base_url
from memory_core.ports.providers import TextRequest

__all__ = ["DEFAULT_OLLAMA_URL", "OllamaEmbedder", "OllamaTextProvider"]

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"


def _root(base_url: str) -> str:
    url = validate_base_url(base_url)
    return url.removesuffix("/api")


class OllamaEmbedder(HttpEmbedder):
    provider_name: ClassVar[str] = "ollama"
    path: ClassVar[str] = "api/embed"

    @classmethod
    def _normalise(cls, base_url: str) -> str:
        return _root(base_url)

    def _raw_vectors(self, body: object, what: str) -> Sequence[object]:
        embeddings = field(body, "embeddings", what)
        if not isinstance(embeddings, list):
            raise malformed(what, "'embeddings' is not a list")
        return embeddings


class OllamaTextProvider(HttpTextProvider):
    provider_name: ClassVar[str] = "ollama"
    path: ClassVar[str] = "api/chat"

    @classmethod
    def _normalise(cls, base_url: str) -> str:
        return _root(base_url)

    def _payload(self, request: TextRequest) -> dict[str, object]:
        options: dict[str, object] = {"temperature": request.temperature}
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        payload: dict[str, object] = {
            "model": self._model,
            "messages": messages_payload(request),
            "stream": False,
            "options": options,
        }
        if request.json_output:
            payload["format"] = "json"
        return payload

    def _content(self, body: object, what: str) -> str:
        message = field(body, "message", what)
        content = field(message, "content", what)
        if not isinstance(content, str):
            raise malformed(what, "the message has no text content")
        return content
