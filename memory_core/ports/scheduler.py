"""The task-scheduler port: background work and per-agent locks without asyncio in the core.

The pure core may not import a concurrency library (R-ARCH-1), yet extraction must run in
the background so it never delays a reply (R-WRITE-1), and writes of one agent must be
serialised (R-WRITE-7). This port is the seam: the composition root hands the services an
event-loop implementation (`memory_adapters.asyncio_scheduler`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, runtime_checkable

__all__ = ["AsyncLock", "TaskHandle", "TaskScheduler"]

T = TypeVar("T")


@runtime_checkable
class TaskHandle(Protocol):
    """One spawned unit of work."""

    @property
    def done(self) -> bool:
        """True once the work has settled: returned, raised or was cancelled."""
        ...

    def cancel(self) -> None:
        """Ask the work to stop at its next await. Idempotent; a no-op once done."""
        ...

    async def wait(self) -> None:
        """Until the work has settled. Never raises the work's own error or cancellation:
        the work reports its outcome itself (services record an explicit terminal outcome)."""
        ...


@runtime_checkable
class AsyncLock(Protocol):
    """A non-reentrant mutual-exclusion lock, fair in acquisition order."""

    async def acquire(self) -> bool:
        """Wait until the lock is free and take it; returns True."""
        ...

    def release(self) -> None:
        """Free the lock; releasing a free lock is a programming error (RuntimeError)."""
        ...

    def locked(self) -> bool: ...


@runtime_checkable
class TaskScheduler(Protocol):
    """Starts background work on the host's event loop and makes locks for it."""

    def spawn(self, work: Callable[[], Awaitable[None]], *, name: str) -> TaskHandle:
        """Start `work()` in the background and return at once, before it has run a step.

        Must be called from code running on the scheduler's loop. The scheduler keeps the
        work alive until it settles; an error escaping it is logged by type, never by
        message (messages may quote content). `name` is content-free (ids only).
        """
        ...

    def make_lock(self) -> AsyncLock:
        """A new lock usable by work on this scheduler's loop."""
        ...

    async def run_within(self, work: Callable[[], Awaitable[T]], seconds: float) -> T:
        """Run `work()` and return its result, or cancel it and raise DeadlineExceeded once
        `seconds` have passed: the hard timer behind a turn's soft deadline (R-READ-1)."""
        ...

    async def yield_now(self) -> None:
        """Let other work on the loop run before continuing: long jobs (an agent clear)
        call it between batches so a turn is never starved (R-FORGET-3)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` (0 or more) on the loop; cancelling the work ends the wait: the
        maintenance timers (arming delay, debounce) are spawned work that sleeps first."""
        ...
