"""Wrapped providers: every call of the wrapped one runs through the hook, which sees what
the call is and how much it carries but no content (R-ARCH-6, R-PROV-3)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memory_contracts.fake_providers import FakeEmbeddingProvider, ScriptedTextProvider
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.provider_wrappers import (
    HookedEmbeddingProvider,
    HookedTextProvider,
    ProviderCall,
    ProviderOperation,
)
from memory_core.ports.providers import (
    ChatMessage,
    EmbeddingProvider,
    EmbeddingPurpose,
    TextProvider,
    TextRequest,
)

T = TypeVar("T")


class RecordingHook:
    def __init__(self) -> None:
        self.calls: list[ProviderCall] = []
        self.closed: list[str] = []

    async def around(self, call: ProviderCall, make: Callable[[], Awaitable[T]]) -> T:
        self.calls.append(call)
        return await make()

    async def close(self, provider: EmbeddingProvider | TextProvider) -> None:
        self.closed.append(provider.provider_id)


def call_args() -> dict[str, object]:
    return {"deadline": Deadline.after(ManualClock(), 5.0), "cancel": CancellationToken()}


def test_embedding_calls_run_through_the_hook_with_counts_only() -> None:
    inner, hook = FakeEmbeddingProvider(dim=4), RecordingHook()
    wrapped = HookedEmbeddingProvider(inner, hook)

    async def scenario() -> None:
        assert await wrapped.dimensions(**call_args()) == 4  # type: ignore[arg-type]
        vectors = await wrapped.embed(
            ["a secret-ish text", "another"],
            purpose=EmbeddingPurpose.BATCH,
            **call_args(),  # type: ignore[arg-type]
        )
        assert len(vectors) == 2 and len(vectors[0]) == 4
        await wrapped.aclose()

    asyncio.run(scenario())
    assert [c.operation for c in hook.calls] == [
        ProviderOperation.DIMENSIONS,
        ProviderOperation.EMBED,
    ]
    embed = hook.calls[1]
    assert (embed.texts, embed.purpose) == (2, EmbeddingPurpose.BATCH)
    assert "secret-ish" not in repr(embed)
    assert hook.closed == ["fake"]
    assert (wrapped.provider_id, wrapped.model_id, wrapped.wrapped) == ("fake", "hash-v1", inner)
    assert repr(wrapped) == "HookedEmbeddingProvider('fake', 'hash-v1')"


def test_a_completion_runs_through_the_hook_and_its_answer_comes_back() -> None:
    inner, hook = ScriptedTextProvider(["the answer"]), RecordingHook()
    wrapped = HookedTextProvider(inner, hook)
    request = TextRequest(messages=[ChatMessage(role="user", content="private prompt")])

    async def scenario() -> str:
        return await wrapped.complete(request, **call_args())  # type: ignore[arg-type]

    assert asyncio.run(scenario()) == "the answer"
    (call,) = hook.calls
    assert (call.operation, call.messages) == (ProviderOperation.COMPLETE, 1)
    assert "private prompt" not in repr(call)
    assert wrapped.wrapped is inner
