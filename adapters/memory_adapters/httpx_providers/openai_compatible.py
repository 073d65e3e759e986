"""OpenAI-compatible HTTP providers: OpenAI, vLLM, llama.cpp server, LM Studio (R-PROV-6).

`POST {base}/v1/embeddings` and `POST {base}/v1/chat/completions`. The base URL may be given
with or without the trailing `/v1`.
"""

from __future__ import annotations

import logging
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
from memory_adapters.httpx_providers.errors import ProviderRequestRefused, malformed
from memory_adapters.httpx_providers.http import validate_base_url
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ValidationError
from memory_core.ports.providers import TextRequest

__all__ = ["OpenAICompatibleEmbedder", "OpenAICompatibleTextProvider"]

JsonMode = Literal["auto", "json_schema", "json_object", "none"]
JSON_MODES: tuple[JsonMode, ...] = ("auto", "json_schema", "json_object", "none")
# What "auto" tries, strictest first: many local servers reject or ignore one of them.
_LADDER: tuple[JsonMode, ...] = ("json_schema", "json_object", "none")

_log = logging.getLogger(__name__)


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
    """Chat completions. For a request wanting JSON, `json_mode` says how to ask:

    - "auto" (the default): `response_format: json_schema` (strict) when the request carries
      a schema, else `json_object`; a server that refuses the form (HTTP 400/422, before
      generating anything) is asked again with the next one down — `json_object`, then
      none (the prompt carries the instruction) — and the form that worked is kept;
    - "json_schema", "json_object" or "none": exactly that form (a request without a schema
      asks `json_schema` providers for `json_object`).

    A server that accepts a form and ignores it is the parser's to tolerate.
    """

    provider_name: ClassVar[str] = "openai-compatible"
    path: ClassVar[str] = "chat/completions"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: ApiKey | str | None = None,
        json_mode: JsonMode = "auto",
        timeout_cap: float | None = None,
        max_connections: int = 4,
        max_response_bytes: int = TEXT_RESPONSE_MAX_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if json_mode not in JSON_MODES:
            raise ValidationError("json_mode", f"must be one of {', '.join(JSON_MODES)}")
        super().__init__(
            base_url=base_url,
            model=model,
            api_key=api_key,
            timeout_cap=timeout_cap,
            max_connections=max_connections,
            max_response_bytes=max_response_bytes,
            transport=transport,
        )
        self._json_mode: JsonMode = json_mode
        self._learned: JsonMode | None = None  # "auto": the form this server accepted

    @classmethod
    def _normalise(cls, base_url: str) -> str:
        return _v1(base_url)

    def _forms(self, request: TextRequest) -> tuple[JsonMode, ...]:
        if not request.json_output:
            return ("none",)
        if self._json_mode != "auto":
            mode = self._json_mode
            return (
                ("json_object",) if mode == "json_schema" and not request.json_schema else (mode,)
            )
        first = "json_schema" if request.json_schema is not None else "json_object"
        ladder = _LADDER[_LADDER.index(first) :]
        if self._learned in ladder:
            ladder = ladder[ladder.index(self._learned) :]
        return ladder

    def _payload(self, request: TextRequest, form: JsonMode = "none") -> dict[str, object]:
        payload: dict[str, object] = {
            "model": self._model,
            "messages": messages_payload(request),
            "temperature": request.temperature,
            "stream": False,
        }
        if request.max_tokens is not None:
            payload["max_tokens"] = request.max_tokens
        if form == "json_schema" and request.json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.json_schema.name,
                    "strict": True,
                    "schema": dict(request.json_schema.schema),
                },
            }
        elif form == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        what = f"{self.provider_name} chat"
        forms = self._forms(request)
        for n, form in enumerate(forms):
            try:
                answer = await self._endpoint.post(
                    self.path,
                    self._payload(request, form),
                    deadline=deadline,
                    cancel=cancel,
                    what=what,
                    idempotent=False,
                    limit=self._limit,
                    read=lambda body: self._content(body, what),
                )
            except ProviderRequestRefused:
                # Refused before anything was generated: a different request, not a re-send.
                if n == len(forms) - 1:
                    raise
                _log.info("%s refused response_format %s; trying %s", what, form, forms[n + 1])
                continue
            if self._json_mode == "auto" and request.json_output:
                self._learned = form
            return answer
        raise AssertionError("unreachable: the last form re-raises")

    def _content(self, body: object, what: str) -> str:
        choices = field(body, "choices", what)
        if not isinstance(choices, list) or not choices:
            raise malformed(what, "'choices' is empty")
        message = field(choices[0], "message", what)
        content = field(message, "content", what)
        if not isinstance(content, str):
            raise malformed(what, "the message has no text content")
        return content
