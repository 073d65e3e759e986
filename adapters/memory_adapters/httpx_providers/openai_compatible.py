"""OpenAI-compatible HTTP providers: OpenAI, vLLM, llama.cpp server, LM Studio (R-PROV-6).

`POST {base}/v1/embeddings` and `POST {base}/v1/chat/completions`. The base URL may be given
with or without the trailing `/v1`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

import httpx

from memory_adapters.httpx_providers.base import (
    TEXT_RESPONSE_MAX_BYTES,
    HttpEmbedder,
    HttpTextProvider,
    field,
    messages_payload,
)
from memory_adapters.httpx_providers.credentials import ApiKey
from memory_adapters.httpx_providers.errors import malformed
from memory_adapters.httpx_providers.http import validate_base_url
from memory_core.domain.errors import ValidationError
from memory_core.ports.providers import TextRequest

__all__ = ["OpenAICompatibleEmbedder", "OpenAICompatibleTextProvider"]

JsonMode = Literal["json_object", "none"]


def _v1(base_url: str) -> str:
    url = validate_base_url(base_url)
    return url if url.endswith("/v1") else f"{url}/v1"


class OpenAICompatibleEmbedder(HttpEmbedder):
    """`dimensions`, when given, is sent as the API's `dimensions` parameter (for models that
    can shorten their vectors) and every answer must have exactly that many."""

    provider_name: ClassVar[str] = "openai-compatible"
    path: ClassVar[str] = "embeddings"

    @classmethod
    def _normalise(cls, base_url: str) -> str:
        return _v1(base_url)

    def _payload(self, texts: list[str]) -> dict[str, object]:
        payload: dict[str, object] = {"model": self._model, "input": texts}
        if self._requested_dim is not None:
            payload["dimensions"] = self._requested_dim
        return payload

    def _raw_vectors(self, body: object, what: str) -> Sequence[object]:
        data = field(body, "data", what)
        if not isinstance(data, list):
            raise malformed(what, "'data' is not a list")
        embeddings: list[object] = []
        indexes: list[object] = []
        for item in data:
            embedding = field(item, "embedding", what)
            if isinstance(embedding, str):
                raise malformed(what, "base64 embeddings are not supported")
            embeddings.append(embedding)
            indexes.append(item.get("index") if isinstance(item, dict) else None)
        if all(isinstance(index, int) for index in indexes):
            # The API orders by `index`; trust it over the list order, but only if complete.
            if sorted(indexes) != list(range(len(indexes))):  # type: ignore[type-var]
                raise malformed(what, "the embedding indexes are not 0..n-1")
            ordered = sorted(zip(indexes, embeddings, strict=True), key=lambda pair: pair[0])
            embeddings = [embedding for _, embedding in ordered]
        return embeddings


class OpenAICompatibleTextProvider(HttpTextProvider):
    """Chat completions; `json_output` asks for `response_format: json_object` unless
    `json_mode="none"` (for servers that refuse it; the prompt then carries the instruction)."""

    provider_name: ClassVar[str] = "openai-compatible"
    path: ClassVar[str] = "chat/completions"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: ApiKey | str | None = None,
        json_mode: JsonMode = "json_object",
        timeout_cap: float | None = None,
        max_connections: int = 4,
        max_response_bytes: int = TEXT_RESPONSE_MAX_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if json_mode not in ("json_object", "none"):
            raise ValidationError("json_mode", "must be 'json_object' or 'none'")
        super().__init__(
            base_url=base_url,
            model=model,
            api_key=api_key,
            timeout_cap=timeout_cap,
            max_connections=max_connections,
            max_response_bytes=max_response_bytes,
            transport=transport,
        )
        self._json_mode = json_mode

    @classmethod
    def _normalise(cls, base_url: str) -> str:
        return _v1(base_url)

    def _payload(self, request: TextRequest) -> dict[str, object]:
        payload: dict[str, object] = {
            "model": self._model,
            "messages": messages_payload(request),
            "temperature": request.temperature,
            "stream": False,
        }
        if request.max_tokens is not None:
            payload["max_tokens"] = request.max_tokens
        if request.json_output and self._json_mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _content(self, body: object, what: str) -> str:
        choices = field(body, "choices", what)
        if not isinstance(choices, list) or not choices:
            raise malformed(what, "'choices' is empty")
        message = field(choices[0], "message", what)
        content = field(message, "content", what)
        if not isinstance(content, str):
            raise malformed(what, "the message has no text content")
        return content
