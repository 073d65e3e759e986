"""Provider ports: embedding and text generation, always under a deadline and a token.

The gateway (`memory_core.services.gateway`) wraps these with adaptive deadlines, capacity
limits and the circuit breaker; adapters only translate one call into one request.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity

__all__ = [
    "ChatMessage",
    "EmbeddingProvider",
    "EmbeddingPurpose",
    "TextProvider",
    "TextRequest",
    "identity_of",
]


class EmbeddingPurpose(StrEnum):
    QUERY = "query-embedding"
    BATCH = "embedding-batch"
    WARM = "embedding-warm"
    DIMENSION = "dimension"


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors of one fixed identity (provider, model, dimension)."""

    @property
    def provider_id(self) -> str:
        """Stable id of the provider (e.g. `openai-compatible`, `local-minilm`)."""
        ...

    @property
    def model_id(self) -> str:
        ...

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        """The vector dimension; may ask the provider once and cache it."""
        ...

    async def embed(
        self, texts: Sequence[str], *, purpose: EmbeddingPurpose, deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        """One vector per text, in input order, each of `dimensions()` finite floats.

        Raises DeadlineExceeded, OperationCancelled, ProviderUnavailable (transport or
        retryable status) or ProviderResponseError (bad shape); messages carry no secret.
        """
        ...

    async def aclose(self) -> None:
        """Release connections. Idempotent."""
        ...


def identity_of(provider: EmbeddingProvider, dim: int) -> EmbeddingIdentity:
    return EmbeddingIdentity(provider=provider.provider_id, model=provider.model_id, dim=dim)


@attrs.frozen(kw_only=True)
class ChatMessage:
    role: str
    content: str


@attrs.frozen(kw_only=True)
class TextRequest:
    """One chat completion. `json_output` asks the provider for a JSON object when it can."""

    messages: tuple[ChatMessage, ...] = attrs.field(converter=tuple)
    temperature: float = 0.2
    max_tokens: int | None = None
    json_output: bool = False


@runtime_checkable
class TextProvider(Protocol):
    """Generates text for extraction and decisions."""

    @property
    def provider_id(self) -> str:
        ...

    @property
    def model_id(self) -> str:
        ...

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        """The assistant message text. Same error contract as `EmbeddingProvider.embed`."""
        ...

    async def aclose(self) -> None:
        ...
