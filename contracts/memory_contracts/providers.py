"""Contract suites for `EmbeddingProvider` and `TextProvider` (R-ARCH-5, R-HOST-3).

Subclass `EmbeddingProviderContract` / `TextProviderContract` in a `Test*` class and override
the factory fixtures; the suite checks what the port docstrings promise:

    class TestMyEmbedder(EmbeddingProviderContract):
        @pytest.fixture
        def embedding_provider_factory(self):
            return lambda: MyEmbedder(api_key=SENTINEL_SECRET)

Factories, not instances: each test builds its provider inside its own event loop (an HTTP
client belongs to the loop that first used it) and closes it. Build every provider with
`SENTINEL_SECRET` as its API key; the suite checks that it never shows in a repr or an error.

Optional fixtures, each a capability — a test that needs one is skipped when it is missing:
- `stalling_*_provider_factory`: a provider whose calls hang (a server that never answers),
  for "the deadline is honoured" and "cancellation is honoured" mid-call;
- `failing_*_provider_factory`: a provider whose calls fail (a server answering 500 that
  echoes the request's headers back), for typed errors without the secret.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    DeadlineExceeded,
    OperationCancelled,
    ProviderError,
    ProviderResponseError,
    ProviderUnavailable,
)
from memory_core.ports.providers import (
    ChatMessage,
    EmbeddingProvider,
    EmbeddingPurpose,
    TextProvider,
    TextRequest,
)

__all__ = [
    "SENTINEL_SECRET",
    "EmbeddingProviderContract",
    "TextProviderContract",
    "assert_no_secret",
]

# Deliberately not shaped like any known key format, so only the provider itself can know to
# hide it: a pattern-based redactor alone would not catch it.
SENTINEL_SECRET = "amc-contract-sentinel-Q7ZK2M9XW4"

P = TypeVar("P", EmbeddingProvider, TextProvider)
R = TypeVar("R")


class _Monotonic:
    def monotonic(self) -> float:
        return time.monotonic()


CLOCK = _Monotonic()


def assert_no_secret(value: object, secret: str = SENTINEL_SECRET) -> None:
    """`secret` appears in no str/repr/args of `value` nor of any exception it chains to."""
    seen: set[int] = set()
    while value is not None and id(value) not in seen:
        seen.add(id(value))
        texts = [str(value), repr(value)]
        if isinstance(value, BaseException):
            texts.extend(repr(arg) for arg in value.args)
            texts.extend(getattr(value, "__notes__", ()))
        for text in texts:
            assert secret not in text, f"the secret leaked through {type(value).__name__}"
        value = value.__cause__ or value.__context__ if isinstance(value, BaseException) else None


def _run(factory: Callable[[], P], use: Callable[[P], Awaitable[R]]) -> R:
    async def scenario() -> R:
        provider = factory()
        try:
            return await use(provider)
        finally:
            await provider.aclose()

    return asyncio.run(scenario())


def _cancel_after(seconds: float) -> CancellationToken:
    token = CancellationToken()
    asyncio.get_running_loop().call_later(seconds, token.cancel, "contract cancel")
    return token


def _timed(factory: Callable[[], P], use: Callable[[P], Awaitable[Any]]) -> tuple[Any, float]:
    """(the exception raised, seconds taken) of a call expected to fail."""

    async def scenario() -> tuple[Any, float]:
        provider = factory()
        started = time.monotonic()
        try:
            await use(provider)
        except (ProviderError, DeadlineExceeded, OperationCancelled) as exc:
            return exc, time.monotonic() - started
        finally:
            await provider.aclose()
        pytest.fail("the call was expected to raise a typed provider, deadline or cancel error")

    return asyncio.run(scenario())


def _cosine(a: Any, b: Any) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class _DeadlineAndCancellation:
    """Shared by both suites: how long a well-behaved provider may overrun."""

    #: Seconds a provider may take beyond its deadline or cancellation to raise.
    slack_seconds: float = 1.0
    stall_deadline_seconds: float = 0.3
    cancel_after_seconds: float = 0.2


class EmbeddingProviderContract(_DeadlineAndCancellation):
    """The `EmbeddingProvider` port contract."""

    @pytest.fixture
    def embedding_provider_factory(self) -> Callable[[], EmbeddingProvider]:
        raise NotImplementedError("override `embedding_provider_factory` in your test class")

    @pytest.fixture
    def stalling_embedding_provider_factory(self) -> Callable[[], EmbeddingProvider]:
        pytest.skip("capability not provided: stalling_embedding_provider_factory")

    @pytest.fixture
    def failing_embedding_provider_factory(self) -> Callable[[], EmbeddingProvider]:
        pytest.skip("capability not provided: failing_embedding_provider_factory")

    @staticmethod
    def _embed(texts: list[str], *, seconds: float = 30.0, purpose=EmbeddingPurpose.BATCH):
        def use(provider: EmbeddingProvider) -> Awaitable[Any]:
            return provider.embed(
                texts,
                purpose=purpose,
                deadline=Deadline.after(CLOCK, seconds),
                cancel=CancellationToken(),
            )

        return use

    def test_ids_are_non_empty_strings(self, embedding_provider_factory) -> None:
        async def ids(provider: EmbeddingProvider) -> tuple[str, str]:
            return provider.provider_id, provider.model_id

        for value in _run(embedding_provider_factory, ids):
            assert isinstance(value, str) and value

    def test_one_finite_vector_per_text_of_the_reported_dimension(
        self, embedding_provider_factory
    ) -> None:
        """R-PROV-4: count, dimension and finiteness match what the provider reports."""
        texts = ["the user lives in Berlin", "a cat sleeps", "支付宝", "x"]

        async def use(provider: EmbeddingProvider) -> tuple[int, Any]:
            deadline = Deadline.after(CLOCK, 30)
            dim = await provider.dimensions(deadline=deadline, cancel=CancellationToken())
            vectors = await provider.embed(
                texts,
                purpose=EmbeddingPurpose.BATCH,
                deadline=deadline,
                cancel=CancellationToken(),
            )
            return dim, vectors

        dim, vectors = _run(embedding_provider_factory, use)
        assert isinstance(dim, int) and dim > 0
        assert len(vectors) == len(texts)
        for vector in vectors:
            assert len(vector) == dim
            assert all(isinstance(v, float) and math.isfinite(v) for v in vector)

    def test_vectors_follow_the_input_order(self, embedding_provider_factory) -> None:
        async def use(provider: EmbeddingProvider) -> tuple[Any, Any]:
            forward = await self._embed(["alpha centauri", "beta carotene"])(provider)
            backward = await self._embed(["beta carotene", "alpha centauri"])(provider)
            return forward, backward

        forward, backward = _run(embedding_provider_factory, use)
        assert _cosine(forward[0], backward[1]) > 0.999
        assert _cosine(forward[1], backward[0]) > 0.999

    def test_an_empty_input_gives_an_empty_result(self, embedding_provider_factory) -> None:
        assert list(_run(embedding_provider_factory, self._embed([]))) == []

    @pytest.mark.parametrize("purpose", list(EmbeddingPurpose))
    def test_every_purpose_is_accepted(self, embedding_provider_factory, purpose) -> None:
        assert len(_run(embedding_provider_factory, self._embed(["hi"], purpose=purpose))) == 1

    def test_the_dimension_is_stable(self, embedding_provider_factory) -> None:
        async def use(provider: EmbeddingProvider) -> tuple[int, int]:
            deadline = Deadline.after(CLOCK, 30)
            first = await provider.dimensions(deadline=deadline, cancel=CancellationToken())
            second = await provider.dimensions(deadline=deadline, cancel=CancellationToken())
            return first, second

        first, second = _run(embedding_provider_factory, use)
        assert first == second

    def test_an_expired_deadline_raises_deadline_exceeded_at_once(
        self, embedding_provider_factory
    ) -> None:
        """R-ARCH-6: a provider never works past its deadline."""
        error, took = _timed(embedding_provider_factory, self._embed(["x"], seconds=0))
        assert isinstance(error, DeadlineExceeded)
        assert took < self.slack_seconds

    def test_a_cancelled_token_raises_operation_cancelled(self, embedding_provider_factory):
        """R-PROV-3: cancellation reaches the embedding provider."""
        token = CancellationToken()
        token.cancel()

        def use(provider: EmbeddingProvider) -> Awaitable[Any]:
            return provider.embed(
                ["x"],
                purpose=EmbeddingPurpose.QUERY,
                deadline=Deadline.after(CLOCK, 30),
                cancel=token,
            )

        error, _ = _timed(embedding_provider_factory, use)
        assert isinstance(error, OperationCancelled)

    def test_a_stalled_call_ends_at_its_deadline(self, stalling_embedding_provider_factory):
        """R-ARCH-6: DeadlineExceeded within the deadline plus a small slack."""
        seconds = self.stall_deadline_seconds
        error, took = _timed(
            stalling_embedding_provider_factory, self._embed(["x"], seconds=seconds)
        )
        assert isinstance(error, DeadlineExceeded)
        assert took < seconds + self.slack_seconds

    def test_cancelling_mid_call_ends_it_promptly(self, stalling_embedding_provider_factory):
        """R-PROV-3: a token cancelled while the request is in flight ends the call."""

        def use(provider: EmbeddingProvider) -> Awaitable[Any]:
            return provider.embed(
                ["x"],
                purpose=EmbeddingPurpose.QUERY,
                deadline=Deadline.after(CLOCK, 30),
                cancel=_cancel_after(self.cancel_after_seconds),
            )

        error, took = _timed(stalling_embedding_provider_factory, use)
        assert isinstance(error, OperationCancelled)
        assert took < self.cancel_after_seconds + self.slack_seconds

    def test_a_failure_is_a_typed_error_without_the_secret(
        self, failing_embedding_provider_factory
    ) -> None:
        """R-PROV-5: typed errors whose messages never carry the key."""
        error, _ = _timed(failing_embedding_provider_factory, self._embed(["x"]))
        assert isinstance(error, ProviderUnavailable | ProviderResponseError)
        assert_no_secret(error)

    def test_the_repr_never_shows_the_secret(self, embedding_provider_factory) -> None:
        """R-PROV-5."""

        async def reprs(provider: EmbeddingProvider) -> str:
            return repr(provider) + str(provider)

        assert SENTINEL_SECRET not in _run(embedding_provider_factory, reprs)

    def test_aclose_is_idempotent(self, embedding_provider_factory) -> None:
        async def use(provider: EmbeddingProvider) -> None:
            await provider.aclose()
            await provider.aclose()

        _run(embedding_provider_factory, use)


class TextProviderContract(_DeadlineAndCancellation):
    """The `TextProvider` port contract. The healthy provider must answer a `json_output`
    request with a JSON object."""

    @pytest.fixture
    def text_provider_factory(self) -> Callable[[], TextProvider]:
        raise NotImplementedError("override `text_provider_factory` in your test class")

    @pytest.fixture
    def stalling_text_provider_factory(self) -> Callable[[], TextProvider]:
        pytest.skip("capability not provided: stalling_text_provider_factory")

    @pytest.fixture
    def failing_text_provider_factory(self) -> Callable[[], TextProvider]:
        pytest.skip("capability not provided: failing_text_provider_factory")

    request = TextRequest(
        messages=[
            ChatMessage(role="system", content="Answer with a JSON object."),
            ChatMessage(role="user", content='Say {"ok": true}.'),
        ],
        json_output=True,
        max_tokens=64,
    )

    def _complete(self, *, seconds: float = 30.0, cancel: CancellationToken | None = None):
        def use(provider: TextProvider) -> Awaitable[str]:
            return provider.complete(
                self.request,
                deadline=Deadline.after(CLOCK, seconds),
                cancel=cancel or CancellationToken(),
            )

        return use

    def test_ids_are_non_empty_strings(self, text_provider_factory) -> None:
        async def ids(provider: TextProvider) -> tuple[str, str]:
            return provider.provider_id, provider.model_id

        for value in _run(text_provider_factory, ids):
            assert isinstance(value, str) and value

    def test_a_json_output_request_is_answered_with_a_json_object(self, text_provider_factory):
        answer = _run(text_provider_factory, self._complete())
        assert isinstance(answer, str)
        assert isinstance(json.loads(answer), dict)

    def test_an_expired_deadline_raises_deadline_exceeded_at_once(self, text_provider_factory):
        """R-ARCH-6."""
        error, took = _timed(text_provider_factory, self._complete(seconds=0))
        assert isinstance(error, DeadlineExceeded)
        assert took < self.slack_seconds

    def test_a_cancelled_token_raises_operation_cancelled(self, text_provider_factory) -> None:
        """R-PROV-3: cancellation reaches the text provider."""
        token = CancellationToken()
        token.cancel()
        error, _ = _timed(text_provider_factory, self._complete(cancel=token))
        assert isinstance(error, OperationCancelled)

    def test_a_stalled_call_ends_at_its_deadline(self, stalling_text_provider_factory) -> None:
        """R-ARCH-6."""
        seconds = self.stall_deadline_seconds
        error, took = _timed(stalling_text_provider_factory, self._complete(seconds=seconds))
        assert isinstance(error, DeadlineExceeded)
        assert took < seconds + self.slack_seconds

    def test_cancelling_mid_call_ends_it_promptly(self, stalling_text_provider_factory) -> None:
        """R-PROV-3."""

        def use(provider: TextProvider) -> Awaitable[str]:
            return provider.complete(
                self.request,
                deadline=Deadline.after(CLOCK, 30),
                cancel=_cancel_after(self.cancel_after_seconds),
            )

        error, took = _timed(stalling_text_provider_factory, use)
        assert isinstance(error, OperationCancelled)
        assert took < self.cancel_after_seconds + self.slack_seconds

    def test_a_failure_is_a_typed_error_without_the_secret(self, failing_text_provider_factory):
        """R-PROV-5."""
        error, _ = _timed(failing_text_provider_factory, self._complete())
        assert isinstance(error, ProviderUnavailable | ProviderResponseError)
        assert_no_secret(error)

    def test_the_repr_never_shows_the_secret(self, text_provider_factory) -> None:
        """R-PROV-5."""

        async def reprs(provider: TextProvider) -> str:
            return repr(provider) + str(provider)

        assert SENTINEL_SECRET not in _run(text_provider_factory, reprs)

    def test_aclose_is_idempotent(self, text_provider_factory) -> None:
        async def use(provider: TextProvider) -> None:
            await provider.aclose()
            await provider.aclose()

        _run(text_provider_factory, use)
