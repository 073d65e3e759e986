"""Belt and braces around any provider: no call outlives its deadline or its token.

The composition root wraps every provider a plugin factory returns in `GuardedEmbeddingProvider`
/ `GuardedTextProvider`, so even a third-party provider that ignores its deadline or token
cannot hang a turn (R-ARCH-6, R-PROV-3). Each call runs in its own task; when the deadline
passes or the token fires, the caller is answered at once (DeadlineExceeded /
OperationCancelled) and the task is cancelled. A task that refuses to stop within a short
grace is abandoned and counted as a straggler; while too many stragglers are still running,
new calls are refused (CapacityRejected) rather than piling up. Library exceptions a provider
leaks become typed errors naming only their type (R-PROV-5).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    AgentMemoryError,
    CapacityRejected,
    DeadlineExceeded,
    OperationCancelled,
    ProviderResponseError,
    ProviderUnavailable,
)
from memory_core.domain.secrets import redact_for_log
from memory_core.ports.provider_wrappers import (
    HookedEmbeddingProvider,
    HookedTextProvider,
    ProviderCall,
    ProviderOperation,
)
from memory_core.ports.providers import EmbeddingProvider, TextProvider

__all__ = ["GuardedEmbeddingProvider", "GuardedTextProvider", "ProviderGuard"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


# What a waiting caller's future holds when no result or typed error came: the deadline
# passed, the token fired, or the call's task was cancelled from inside (the provider raised
# CancelledError itself rather than being cancelled by the guard).
_EXPIRED = object()
_STOPPED = object()
_CANCELLED = object()


def _answer(outcome: asyncio.Future[object], value: object) -> None:
    # The first answer wins: a later one finds the caller answered already (or gone).
    if not outcome.done():
        outcome.set_result(value)


class ProviderGuard:
    """Runs one provider's calls under their deadline and token; tracks stragglers."""

    def __init__(self, name: str, *, grace_seconds: float = 0.25, max_stragglers: int = 8) -> None:
        if grace_seconds < 0 or max_stragglers < 0:
            raise ValueError("grace_seconds and max_stragglers must be >= 0")
        self._name = name
        self._grace = grace_seconds
        self._max_stragglers = max_stragglers
        self._stragglers: set[asyncio.Future[object]] = set()

    @property
    def stragglers(self) -> int:
        """Abandoned calls still running (the provider ignored their cancellation)."""
        return len(self._stragglers)

    async def run(
        self,
        make: Callable[[], Awaitable[T]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        what: str,
    ) -> T:
        label = f"{self._name} {what}"
        if cancel.cancelled:
            raise OperationCancelled(f"{label} cancelled")
        remaining = deadline.remaining()
        if remaining <= 0:
            raise DeadlineExceeded(f"{label} exceeded its deadline")
        if len(self._stragglers) > self._max_stragglers - 1:
            raise CapacityRejected(f"{label}: {len(self._stragglers)} abandoned calls still run")
        loop = asyncio.get_running_loop()
        # The caller waits on one future that the call's own task completes, the deadline's
        # timer or the token's stop: two loop turns from start to answer (asyncio.wait took
        # three, plus its own waiter and callbacks) on every query embedding of every turn.
        outcome: asyncio.Future[object] = loop.create_future()
        task: asyncio.Future[None] = asyncio.ensure_future(self._delivered(make, label, outcome))
        timer = loop.call_later(remaining, _answer, outcome, _EXPIRED)

        def stop() -> None:
            _answer(outcome, _STOPPED)
            task.cancel()

        # A token may be cancelled from any thread; the loop's objects only from the loop.
        unregister = cancel.on_cancel(lambda: loop.call_soon_threadsafe(stop))
        try:
            # A typed error of the call is raised here; a CancelledError is the caller's own.
            answer = await outcome
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            unregister()
            timer.cancel()
        if answer is _EXPIRED or answer is _STOPPED or answer is _CANCELLED:
            await self._settle(task)
            if answer is _EXPIRED and not cancel.cancelled:
                raise DeadlineExceeded(f"{label} exceeded its deadline")
            raise OperationCancelled(f"{label} cancelled")
        if cancel.cancelled:
            raise OperationCancelled(f"{label} cancelled")
        return cast(T, answer)

    async def _settle(self, task: asyncio.Future[object]) -> None:
        task.cancel()
        if self._grace > 0:
            await asyncio.wait({task}, timeout=self._grace)
        if not task.done():
            logger.warning("%s ignored cancellation; abandoning the call", self._name)
            self._stragglers.add(task)
            task.add_done_callback(self._stragglers.discard)

    @classmethod
    async def _delivered(
        cls, make: Callable[[], Awaitable[object]], label: str, outcome: asyncio.Future[object]
    ) -> None:
        """The call's task: what the call ends with goes into `outcome` for the waiting
        caller; once the caller has been answered (deadline, token) or has gone, it is only
        logged, so an abandoned call leaves no unretrieved exception behind."""
        try:
            result = await cls._translated(make, label)
        except asyncio.CancelledError:
            _answer(outcome, _CANCELLED)
            raise
        except Exception as exc:
            if outcome.done():
                logger.debug("abandoned provider call ended with %s", type(exc).__name__)
            else:
                outcome.set_exception(exc)
            return
        _answer(outcome, result)

    @staticmethod
    async def _translated(make: Callable[[], Awaitable[T]], label: str) -> T:
        try:
            return await make()
        except AgentMemoryError:
            raise
        except TimeoutError:
            error: AgentMemoryError = DeadlineExceeded(f"{label} exceeded its deadline")
        except OSError as exc:
            error = ProviderUnavailable(f"{label}: {type(exc).__name__}")
        except Exception as exc:
            # The message may quote a URL or a key: log it redacted, raise only the type.
            logger.debug("%s raised %s: %s", label, type(exc).__name__, redact_for_log(str(exc)))
            error = ProviderResponseError(f"{label}: provider raised {type(exc).__name__}")
        # Raised outside the handler, so the foreign exception is not even its __context__.
        raise error


async def _close(provider: EmbeddingProvider | TextProvider, seconds: float) -> None:
    # Shutdown must not hang on a provider either.
    try:
        async with asyncio.timeout(seconds):
            await provider.aclose()
    except TimeoutError:
        logger.warning("%s did not close within %ss", provider.provider_id, seconds)


# What a guard's errors call each operation.
_WHAT = {
    ProviderOperation.DIMENSIONS: "dimension discovery",
    ProviderOperation.EMBED: "embedding",
    ProviderOperation.COMPLETE: "completion",
}


class _GuardHook:
    """A `ProviderGuard` as the wrappers' call hook; closing is bounded too."""

    def __init__(self, guard: ProviderGuard, close_seconds: float) -> None:
        self._guard = guard
        self._close_seconds = close_seconds

    async def around(self, call: ProviderCall, make: Callable[[], Awaitable[T]]) -> T:
        return await self._guard.run(
            make, deadline=call.deadline, cancel=call.cancel, what=_WHAT[call.operation]
        )

    async def close(self, provider: EmbeddingProvider | TextProvider) -> None:
        await _close(provider, self._close_seconds)


class GuardedEmbeddingProvider(HookedEmbeddingProvider):
    """An `EmbeddingProvider` that delegates to `inner` under a `ProviderGuard`."""

    def __init__(
        self,
        inner: EmbeddingProvider,
        *,
        grace_seconds: float = 0.25,
        max_stragglers: int = 8,
        close_seconds: float = 5.0,
    ) -> None:
        self.guard = ProviderGuard(
            inner.provider_id, grace_seconds=grace_seconds, max_stragglers=max_stragglers
        )
        super().__init__(inner, _GuardHook(self.guard, close_seconds))


class GuardedTextProvider(HookedTextProvider):
    """A `TextProvider` that delegates to `inner` under a `ProviderGuard`."""

    def __init__(
        self,
        inner: TextProvider,
        *,
        grace_seconds: float = 0.25,
        max_stragglers: int = 8,
        close_seconds: float = 5.0,
    ) -> None:
        self.guard = ProviderGuard(
            inner.provider_id, grace_seconds=grace_seconds, max_stragglers=max_stragglers
        )
        super().__init__(inner, _GuardHook(self.guard, close_seconds))
