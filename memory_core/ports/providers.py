"""Provider ports: embedding and text generation, always under a deadline and a token.

The gateway (`memory_core.services.providers.gateway.service`) wraps these with adaptive
deadlines, capacity limits and the circuit breaker; adapters only translate one call into
one request (plus a safe retry). The contract suites in `memory_contracts.providers` check
what is promised here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import ValidationError

__all__ = [
    "CHAT_ROLES",
    "ChatMessage",
    "EmbeddingProvider",
    "EmbeddingPurpose",
    "JsonSchema",
    "TextProvider",
    "TextRequest",
    "identity_of",
]


class EmbeddingPurpose(StrEnum):
    """Why a vector is wanted; decides the gateway's deadline and capacity bucket."""

    QUERY = "query-embedding"
    BATCH = "embedding-batch"
    WARM = "embedding-warm"
    DIMENSION = "dimension"


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors of one fixed identity (provider, model, dimension).

    Every waiting method honours both arguments: past `deadline` it raises DeadlineExceeded,
    once `cancel` fires it raises OperationCancelled — promptly, without waiting for the
    remote side. Other failures are ProviderUnavailable (transport, 429, 5xx: worth trying
    again later) or ProviderResponseError (4xx, malformed or inconsistent answer). No error
    message, log line or repr carries an API key (R-PROV-5).
    """

    @property
    def provider_id(self) -> str:
        """Stable id of the provider (e.g. `openai-compatible`, `local-minilm`)."""
        ...

    @property
    def model_id(self) -> str:
        """The model name as the provider knows it; with the id and dimension, the identity."""
        ...

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        """The vector dimension; may ask the provider once (one probe text) and cache it."""
        ...

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        """One vector per text, in input order, each of `dimensions()` finite floats.

        An empty `texts` gives an empty result without a request. The caller (the gateway)
        does the batching; an adapter sends what it is given as one request.
        """
        ...

    async def aclose(self) -> None:
        """Release connections. Idempotent."""
        ...


def identity_of(provider: EmbeddingProvider, dim: int) -> EmbeddingIdentity:
    return EmbeddingIdentity(provider=provider.provider_id, model=provider.model_id, dim=dim)


CHAT_ROLES = frozenset({"system", "user", "assistant"})


def _known_role(_: object, __: attrs.Attribute[str], value: str) -> None:
    if value not in CHAT_ROLES:
        raise ValidationError("role", f"must be one of {sorted(CHAT_ROLES)}")


@attrs.frozen(kw_only=True)
class ChatMessage:
    role: str = attrs.field(validator=_known_role)
    content: str


def _messages(_: object, __: attrs.Attribute[tuple[ChatMessage, ...]], value: tuple) -> None:
    if not value:
        raise ValidationError("messages", "must not be empty")
    if not all(isinstance(message, ChatMessage) for message in value):
        raise ValidationError("messages", "must be ChatMessage values")


def _temperature(_: object, __: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError("temperature", "must be a finite number")
    if not 0.0 <= value <= 2.0:
        raise ValidationError("temperature", "must be within [0, 2]")


def _max_tokens(_: object, __: attrs.Attribute[int | None], value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValidationError("max_tokens", "must be a positive integer or None")


@attrs.frozen(kw_only=True)
class JsonSchema:
    """The JSON Schema an answer must follow, for providers that can enforce one (strict
    structured output); `name` is the schema's name where an API asks for one."""

    name: str
    schema: Mapping[str, object]


@attrs.frozen(kw_only=True)
class TextRequest:
    """One chat completion. `json_output` asks the provider for a JSON object when it can;
    `json_schema`, when given, for one that follows that schema (a provider that cannot
    enforce it asks for a plain JSON object, and the caller's parser stays tolerant)."""

    messages: tuple[ChatMessage, ...] = attrs.field(converter=tuple, validator=_messages)
    temperature: float = attrs.field(default=0.2, validator=_temperature)
    max_tokens: int | None = attrs.field(default=None, validator=_max_tokens)
    json_output: bool = False
    json_schema: JsonSchema | None = None


@runtime_checkable
class TextProvider(Protocol):
    """Generates text for extraction, decisions and maintenance.

    Same error contract as `EmbeddingProvider`. A completion is not idempotent (it costs
    and may differ), so an adapter never re-sends one after the request left the machine.
    """

    @property
    def provider_id(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        """The assistant message text."""
        ...

    async def aclose(self) -> None:
        """Release connections. Idempotent."""
        ...
