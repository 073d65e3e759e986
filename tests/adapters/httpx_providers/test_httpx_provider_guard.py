"""The provider guard the composition root wraps around every provider (R-ARCH-6, R-PROV-3).

(Kept beside the HTTP provider tests: the guard is the same family of adapter code.)
"""

from __future__ import annotations

import asyncio
import time

import pytest

from memory_adapters.clocks import MonotonicClock
from memory_adapters.provider_guard import GuardedEmbeddingProvider, GuardedTextProvider
from memory_contracts.fake_providers import FakeEmbeddingProvider, ScriptedTextProvider
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    CapacityRejected,
    DeadlineExceeded,
    OperationCancelled,
    ProviderResponseError,
    ProviderUnavailable,
)
from memory_core.ports.providers import ChatMessage, EmbeddingPurpose, TextRequest

CLOCK = MonotonicClock()
REQUEST = TextRequest(messages=[ChatMessage(role="user", content="hi")])


class Stubborn(FakeEmbeddingProvider):
    """Swallows every cancellation until `release` is set: the worst third-party provider."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def embed(self, texts, *, purpose, deadline, cancel):
        while not self.release.is_set():
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                continue
        return [self.vector(text) for text in texts]


def _embed(provider, seconds: float = 5.0, cancel: CancellationToken | None = None):
    return provider.embed(
        ["x"],
        purpose=EmbeddingPurpose.QUERY,
        deadline=Deadline.after(CLOCK, seconds),
        cancel=cancel or CancellationToken(),
    )


def test_a_provider_ignoring_cancellation_is_abandoned_and_limited() -> None:
    """R-ARCH-6: the caller gets DeadlineExceeded on time; the stubborn call is counted as a
    straggler, and while too many run, new calls are refused instead of piling up."""

    async def scenario():
        stubborn = Stubborn()
        guarded = GuardedEmbeddingProvider(stubborn, grace_seconds=0.01, max_stragglers=1)
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            await _embed(guarded, seconds=0.1)
        took = time.monotonic() - started
        assert guarded.guard.stragglers == 1
        with pytest.raises(CapacityRejected):
            await _embed(guarded)
        stubborn.release.set()
        for _ in range(5):
            await asyncio.sleep(0)  # let the straggler finish (a loop turn, not a timer)
        assert guarded.guard.stragglers == 0
        assert len(await _embed(guarded)) == 1
        return took

    assert asyncio.run(scenario()) < 1.0


def test_cancellation_answers_the_caller_even_if_the_provider_ignores_it() -> None:
    """R-PROV-3."""

    async def scenario():
        stubborn = Stubborn()
        guarded = GuardedEmbeddingProvider(stubborn, grace_seconds=0.01)
        token = CancellationToken()
        asyncio.get_running_loop().call_later(0.05, token.cancel)
        try:
            with pytest.raises(OperationCancelled):
                await _embed(guarded, seconds=10, cancel=token)
        finally:
            stubborn.release.set()

    asyncio.run(scenario())


class Raising(ScriptedTextProvider):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    async def complete(self, request, *, deadline, cancel):
        raise self.error


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RuntimeError("GET https://h/v1?key=sk-abcdefghijklmnop"), ProviderResponseError),
        (ConnectionResetError("reset by peer"), ProviderUnavailable),
        (TimeoutError(), DeadlineExceeded),
        (ProviderUnavailable("typed already"), ProviderUnavailable),
    ],
)
def test_leaked_library_exceptions_become_typed_errors_naming_only_their_type(error, expected):
    """R-PROV-5: a foreign message (which may quote a URL or key) never reaches the caller."""
    guarded = GuardedTextProvider(Raising(error))

    async def scenario():
        await guarded.complete(
            REQUEST, deadline=Deadline.after(CLOCK, 5), cancel=CancellationToken()
        )

    with pytest.raises(expected) as caught:
        asyncio.run(scenario())
    assert "sk-abcdefghijklmnop" not in str(caught.value)
    if not isinstance(error, ProviderUnavailable):
        assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_a_result_arriving_after_cancellation_is_dropped() -> None:
    class Deaf(ScriptedTextProvider):
        async def complete(self, request, *, deadline, cancel):
            cancel.cancel("raced")  # the cancel lands while the answer is on its way
            return "late"

    guarded = GuardedTextProvider(Deaf())

    async def scenario():
        return await guarded.complete(
            REQUEST, deadline=Deadline.after(CLOCK, 5), cancel=CancellationToken()
        )

    with pytest.raises(OperationCancelled):
        asyncio.run(scenario())


def test_a_provider_cancelling_itself_is_a_cancelled_call_not_a_cancelled_caller() -> None:
    """R-PROV-3: a CancelledError from inside the provider (not the caller's own) is answered
    as OperationCancelled, and the caller's task is not cancelled by it."""

    class SelfCancelling(ScriptedTextProvider):
        async def complete(self, request, *, deadline, cancel):
            raise asyncio.CancelledError

    guarded = GuardedTextProvider(SelfCancelling())

    async def scenario():
        with pytest.raises(OperationCancelled):
            await guarded.complete(
                REQUEST, deadline=Deadline.after(CLOCK, 5), cancel=CancellationToken()
            )
        await asyncio.sleep(0)  # the caller's task goes on: it was not the one cancelled
        return "went on"

    assert asyncio.run(scenario()) == "went on"


def test_a_cancelled_caller_takes_its_provider_call_down_with_it() -> None:
    """R-PROV-3: the caller's own task cancelled (e.g. the host dropped the turn): the
    provider's call is cancelled too, not left running behind a caller that is gone."""

    class Waiting(FakeEmbeddingProvider):
        def __init__(self) -> None:
            super().__init__()
            self.started = asyncio.Event()
            self.cancelled = False

        async def embed(self, texts, *, purpose, deadline, cancel):
            self.started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise

    async def scenario():
        provider = Waiting()
        guarded = GuardedEmbeddingProvider(provider)
        caller = asyncio.ensure_future(_embed(guarded))
        await provider.started.wait()
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        await asyncio.sleep(0)  # the provider's task runs its cancellation
        return provider.cancelled, guarded.guard.stragglers

    assert asyncio.run(scenario()) == (True, 0)


def test_the_guard_delegates_identity_and_closing_within_a_bound() -> None:
    class Hanging(FakeEmbeddingProvider):
        async def aclose(self) -> None:
            await asyncio.Event().wait()

    inner = Hanging(provider_id="third-party", model_id="m-1")
    guarded = GuardedEmbeddingProvider(inner, close_seconds=0.05)
    assert (guarded.provider_id, guarded.model_id, guarded.wrapped) == ("third-party", "m-1", inner)
    assert repr(guarded) == "GuardedEmbeddingProvider('third-party', 'm-1')"
    started = time.monotonic()
    asyncio.run(guarded.aclose())
    assert time.monotonic() - started < 5  # the inner close never returns
