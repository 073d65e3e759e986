"""What the OpenAI-compatible and Ollama providers share: one request per call, answer checks,
dimension discovery, response caps, and reprs that show the model and host but never the key.

An embedding answer is capped by `embedding_response_max_bytes` and, once the dimension is
known, by what that many vectors can take (`_BYTES_PER_VALUE` each plus an envelope), so a
wrong-dimension or padded answer is cut off while it streams; within the cap, every vector's
length is checked before any of its values is inspected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

import httpx

from memory_adapters.httpx_providers.credentials import ApiKey
from memory_adapters.httpx_providers.errors import malformed
from memory_adapters.httpx_providers.http import JsonEndpoint, ResponseLimit, display_url
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ValidationError
from memory_core.ports.providers import EmbeddingPurpose, TextRequest
from memory_core.settings import MemorySettings

__all__ = [
    "DIMENSION_PROBE_TEXT",
    "EMBEDDING_RESPONSE_MAX_BYTES",
    "TEXT_RESPONSE_MAX_BYTES",
    "HttpEmbedder",
    "HttpTextProvider",
]

DIMENSION_PROBE_TEXT = "dimension probe"

# The settings' defaults, for providers built without the composition root (tests, scripts).
_DEFAULTS = MemorySettings()
EMBEDDING_RESPONSE_MAX_BYTES = _DEFAULTS.embedding_response_max_bytes
TEXT_RESPONSE_MAX_BYTES = _DEFAULTS.text_response_max_bytes
EMBEDDING_LIMIT = "embedding_response_max_bytes"
TEXT_LIMIT = "text_response_max_bytes"
# A JSON number as servers print it, pretty-printed with indentation and a newline, stays
# under this; the envelope (index, object, model, usage) under `_ENVELOPE_BYTES`.
_BYTES_PER_VALUE = 64
_ENVELOPE_BYTES = 64 * 1024


def _model(model: object) -> str:
    if not isinstance(model, str) or not model.strip():
        raise ValidationError("model", "must be a non-empty string")
    return model.strip()


def _key(api_key: ApiKey | str | None) -> ApiKey | None:
    return ApiKey(api_key) if isinstance(api_key, str) else api_key


class _HttpProvider:
    provider_name: ClassVar[str]

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: ApiKey | str | None,
        timeout_cap: float | None,
        max_connections: int,
        transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        self._model = _model(model)
        self._base_url = self._normalise(base_url)
        self._endpoint = JsonEndpoint(
            base_url=self._base_url,
            api_key=_key(api_key),
            timeout_cap=timeout_cap,
            max_connections=max_connections,
            transport=transport,
        )

    @classmethod
    def _normalise(cls, base_url: str) -> str:
        raise NotImplementedError

    @property
    def provider_id(self) -> str:
        return self.provider_name

    @property
    def model_id(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self._model!r}, url={display_url(self._base_url)!r})"

    async def aclose(self) -> None:
        await self._endpoint.aclose()


class HttpEmbedder(_HttpProvider):
    """An `EmbeddingProvider` over one JSON endpoint; subclasses say how to ask and read."""

    path: ClassVar[str]

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: ApiKey | str | None = None,
        dimensions: int | None = None,
        timeout_cap: float | None = None,
        max_connections: int = 8,
        max_response_bytes: int = EMBEDDING_RESPONSE_MAX_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._limit = ResponseLimit(max_response_bytes, EMBEDDING_LIMIT)  # validates it
        if dimensions is not None and (
            isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1
        ):
            raise ValidationError("dimensions", "must be a positive integer")
        super().__init__(
            base_url=base_url,
            model=model,
            api_key=api_key,
            timeout_cap=timeout_cap,
            max_connections=max_connections,
            transport=transport,
        )
        self._requested_dim = dimensions
        self._dim = dimensions  # learnt from the first answer when not configured

    def _payload(self, texts: list[str]) -> dict[str, object]:
        # The OpenAI and Ollama embedding APIs take the same request body.
        payload: dict[str, object] = {"model": self._model, "input": texts}
        if self._requested_dim is not None:
            payload["dimensions"] = self._requested_dim
        return payload

    def _raw_vectors(self, body: object, what: str) -> Sequence[object]:
        raise NotImplementedError

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        if self._dim is None:
            await self.embed(
                [DIMENSION_PROBE_TEXT],
                purpose=EmbeddingPurpose.DIMENSION,
                deadline=deadline,
                cancel=cancel,
            )
        assert self._dim is not None  # set by the successful probe
        return self._dim

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        if not texts:
            return []
        what = f"{self.provider_name} embeddings"
        known = self._dim
        count = len(texts)
        vectors = await self._endpoint.post(
            self.path,
            self._payload(list(texts)),
            deadline=deadline,
            cancel=cancel,
            what=what,
            idempotent=True,
            limit=self._answer_limit(count, known),
            read=lambda body: _checked(self._raw_vectors(body, what), count, known, what),
        )
        dim = len(vectors[0])
        if self._dim is not None and dim != self._dim:  # a concurrent call learnt another
            raise malformed(what, f"inconsistent dimension: {dim} instead of {self._dim}")
        self._dim = dim
        return vectors

    def _answer_limit(self, count: int, dim: int | None) -> ResponseLimit:
        if dim is None:
            return self._limit
        expected = count * dim * _BYTES_PER_VALUE + _ENVELOPE_BYTES
        if expected >= self._limit.max_bytes:
            return self._limit
        return ResponseLimit(expected, f"{count} vectors of {dim} values")


def _checked(raw: Sequence[object], expected: int, dim: int | None, what: str) -> list[list[float]]:
    """The vectors of an answer. Pure, as it may run on a worker thread. Shapes come first,
    so a wrong dimension is refused before a single value is inspected."""
    if len(raw) != expected:
        raise malformed(what, f"{len(raw)} vectors for {expected} texts")
    for item in raw:
        if not isinstance(item, list) or not item:
            raise malformed(what, "a vector is not a non-empty list")
        dim = len(item) if dim is None else dim
        if len(item) != dim:
            raise malformed(what, f"inconsistent dimension: {len(item)} instead of {dim}")
    vectors: list[list[float]] = []
    for item in raw:
        assert isinstance(item, list)  # checked above
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in item):
            raise malformed(what, "a vector holds a non-number")
        vector = [float(v) for v in item]
        if not all(math.isfinite(v) for v in vector):
            raise malformed(what, "a vector holds a non-finite value")
        vectors.append(vector)
    return vectors


class HttpTextProvider(_HttpProvider):
    """A `TextProvider` over one chat endpoint. Never re-sent once the request left."""

    path: ClassVar[str]

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: ApiKey | str | None = None,
        timeout_cap: float | None = None,
        max_connections: int = 4,
        max_response_bytes: int = TEXT_RESPONSE_MAX_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._limit = ResponseLimit(max_response_bytes, TEXT_LIMIT)  # validates it
        super().__init__(
            base_url=base_url,
            model=model,
            api_key=api_key,
            timeout_cap=timeout_cap,
            max_connections=max_connections,
            transport=transport,
        )

    def _payload(self, request: TextRequest) -> dict[str, object]:
        raise NotImplementedError

    def _content(self, body: object, what: str) -> str:
        raise NotImplementedError

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        what = f"{self.provider_name} chat"
        return await self._endpoint.post(
            self.path,
            self._payload(request),
            deadline=deadline,
            cancel=cancel,
            what=what,
            idempotent=False,
            limit=self._limit,
            read=lambda body: self._content(body, what),
        )


def messages_payload(request: TextRequest) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in request.messages]


def field(body: object, key: str, what: str) -> object:
    """`body[key]` of a JSON object, or ProviderResponseError naming what is missing."""
    if not isinstance(body, Mapping) or key not in body:
        raise malformed(what, f"the response has no {key!r}")
    return body[key]
