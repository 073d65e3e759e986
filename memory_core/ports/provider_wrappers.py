"""Providers that wrap another provider and run each of its calls through one hook.

The composition root wraps every provider in a guard (deadline, token, stragglers) and, with
telemetry, in a tracer; both are the same shape — forward the identity, hand each call to
something that runs it — so the shape lives here once and an adapter supplies only its
`CallHook`. A hook sees what a call is and how much it carries (`ProviderCall`: counts and the
purpose, never a text, a prompt or an answer).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from enum import StrEnum
from typing import Protocol, TypeVar

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import (
    EmbeddingProvider,
    EmbeddingPurpose,
    TextProvider,
    TextRequest,
)

__all__ = [
    "CallHook",
    "HookedEmbeddingProvider",
    "HookedTextProvider",
    "ProviderCall",
    "ProviderOperation",
]

T = TypeVar("T")


class ProviderOperation(StrEnum):
    DIMENSIONS = "dimensions"
    EMBED = "embed"
    COMPLETE = "complete"


@attrs.frozen(kw_only=True)
class ProviderCall:
    """One call through a wrapper, as its hook sees it: content-free."""

    operation: ProviderOperation
    deadline: Deadline
    cancel: CancellationToken
    texts: int = 0  # EMBED: how many texts
    purpose: EmbeddingPurpose | None = None  # EMBED
    messages: int = 0  # COMPLETE: how many messages


class CallHook(Protocol):
    """What a wrapper runs each call of its provider through, and how it closes it."""

    async def around(self, call: ProviderCall, make: Callable[[], Awaitable[T]]) -> T:
        """Run `make()` (the wrapped provider's own call) and return what it returns."""
        ...

    async def close(self, provider: EmbeddingProvider | TextProvider) -> None: ...


class _Wrapper:
    def __init__(self, inner: EmbeddingProvider | TextProvider, hook: CallHook) -> None:
        self._inner = inner
        self._hook = hook

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inner.provider_id!r}, {self._inner.model_id!r})"

    @property
    def provider_id(self) -> str:
        return self._inner.provider_id

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    async def aclose(self) -> None:
        await self._hook.close(self._inner)


class HookedEmbeddingProvider(_Wrapper):
    """An `EmbeddingProvider` whose calls run through `hook`; otherwise the wrapped one."""

    def __init__(self, inner: EmbeddingProvider, hook: CallHook) -> None:
        super().__init__(inner, hook)
        self._embedder = inner

    @property
    def wrapped(self) -> EmbeddingProvider:
        return self._embedder

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        return await self._hook.around(
            ProviderCall(operation=ProviderOperation.DIMENSIONS, deadline=deadline, cancel=cancel),
            lambda: self._embedder.dimensions(deadline=deadline, cancel=cancel),
        )

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        call = ProviderCall(
            operation=ProviderOperation.EMBED,
            deadline=deadline,
            cancel=cancel,
            texts=len(texts),
            purpose=purpose,
        )
        return await self._hook.around(
            call,
            lambda: self._embedder.embed(texts, purpose=purpose, deadline=deadline, cancel=cancel),
        )


class HookedTextProvider(_Wrapper):
    """A `TextProvider` whose calls run through `hook`; otherwise the wrapped one."""

    def __init__(self, inner: TextProvider, hook: CallHook) -> None:
        super().__init__(inner, hook)
        self._text = inner

    @property
    def wrapped(self) -> TextProvider:
        return self._text

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        call = ProviderCall(
            operation=ProviderOperation.COMPLETE,
            deadline=deadline,
            cancel=cancel,
            messages=len(request.messages),
        )
        return await self._hook.around(
            call, lambda: self._text.complete(request, deadline=deadline, cancel=cancel)
        )
