"""`BlockingCalls` on asyncio: inline for a local store, a bounded thread pool for a networked one.

`InlineCalls` runs the call on the loop. That is right for SQLite: a call waits at most its
short busy timeout, and a thread hop would cost more than most calls take. It lets the loop
turn once before each call, though: a turn's store calls otherwise never suspend, so a turn,
a drain or a search ran as one uninterrupted step, and twenty such steps queued in one loop
iteration held a timer that had fired — a turn's hard deadline among them — for seconds
(R-READ-1).

`ThreadedCalls` runs each call on a small fixed pool (`loop.run_in_executor`) and awaits it
with `asyncio.wait_for` against the caller's deadline, so a store waiting on a network, a lock
or a slow plan never stops the loop (R-READ-1). At the deadline, or when the caller's token
fires, the caller gets DeadlineExceeded / OperationCancelled at once; a call that has not
started yet never starts, and one already running is abandoned and the store is asked to
interrupt it — its optional `interrupt(thread_id)` method, called from a thread of its own
so a slow cancel request cannot hold the loop either.

Both take the step to yield before a call (`yield_step`, the scheduler's `yield_now` in the
composition root): the scheduler makes background work wait there for its share of a busy
loop, so a store call made by ingestion or a rebuild queues behind the turns' (R-READ-1).
Without one a call yields a single loop turn.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled, StoreError

__all__ = ["InlineCalls", "Interrupt", "ThreadedCalls", "YieldStep"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

# A store's `interrupt(thread_id)`: stop the call that thread is making on it, if it still
# is (the call then fails in that thread). Must not raise; may block for one round trip.
Interrupt = Callable[[int], None]
# What a runner awaits before each call: one loop turn, or the scheduler's `yield_now`.
YieldStep = Callable[[], Awaitable[None]]


async def _one_loop_turn() -> None:
    await asyncio.sleep(0)


class InlineCalls:
    """`BlockingCalls` for a local store: the call runs on the loop after one turn of it,
    once the deadline and the token have been checked (it cannot be stopped midway; its
    own busy timeout bounds it)."""

    def __init__(self, *, yield_step: YieldStep = _one_loop_turn) -> None:
        self._yield_step = yield_step

    async def run(
        self, call: Callable[[], T], *, deadline: Deadline, cancel: CancellationToken
    ) -> T:
        # Every caller's step ends here, so each task's share of a loop iteration is one
        # store call and what follows it; a timed-out task is resumed (and its CancelledError
        # delivered) within one iteration, and a call whose deadline passed meanwhile is
        # not started.
        await self._yield_step()
        cancel.raise_if_cancelled()
        deadline.raise_if_expired("store call")
        return call()

    def close(self) -> None:
        """Nothing to release: no thread was ever started."""


class _Job(Generic[T]):
    """One call and which thread runs it; once abandoned it never starts."""

    __slots__ = ("_abandoned", "_call", "_lock", "_thread")

    def __init__(self, call: Callable[[], T]) -> None:
        self._call = call
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._abandoned = False

    def __call__(self) -> T:
        with self._lock:
            if self._abandoned:
                raise OperationCancelled("abandoned before it started")
            self._thread = threading.get_ident()
        try:
            return self._call()
        finally:
            with self._lock:
                self._thread = None

    def abandon(self) -> bool:
        """Never start; True when the call is running now."""
        with self._lock:
            self._abandoned = True
            return self._thread is not None

    def interrupt(self, interrupt: Interrupt) -> None:
        # Under the lock: the worker cannot finish this call and start the next one on the
        # same thread while the request is on its way, so it only ever reaches this call.
        with self._lock:
            if self._thread is None:
                return
            try:
                interrupt(self._thread)
            except Exception as exc:  # a store breaking its promise must not kill the thread
                _log.warning("store interrupt failed: %s", type(exc).__name__)


class ThreadedCalls:
    """`BlockingCalls` for a networked store: `workers` threads, calls awaited to a deadline.

    Size the pool to the connections the store has: the PostgreSQL claim store serialises
    its calls on one connection, so a second worker would only wait for it — and would then
    run, late, a call whose turn had already given up, where a queued call is simply dropped.
    """

    def __init__(
        self, *, workers: int, interrupt: Interrupt | None, yield_step: YieldStep | None = None
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memory-store")
        # Interrupts get their own thread: the pool's may all be busy with the calls to stop.
        self._interrupts = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-store-interrupt")
            if interrupt is not None
            else None
        )
        self._interrupt = interrupt
        self._yield_step = yield_step
        self._closed = False

    async def run(
        self, call: Callable[[], T], *, deadline: Deadline, cancel: CancellationToken
    ) -> T:
        if self._yield_step is not None:
            await self._yield_step()
        cancel.raise_if_cancelled()
        deadline.raise_if_expired("store call")
        if self._closed:
            raise StoreError("the store-call executor is closed")
        loop = asyncio.get_running_loop()
        job = _Job(call)
        future = loop.run_in_executor(self._pool, job)
        # The token may fire on any thread; the future belongs to the loop.
        unregister = cancel.on_cancel(lambda: loop.call_soon_threadsafe(future.cancel))
        try:
            return await asyncio.wait_for(future, timeout=deadline.remaining())
        except TimeoutError:
            if future.done() and not future.cancelled():
                raise  # the call's own error, not the deadline
            self._abandon(job)
            raise DeadlineExceeded("store call exceeded its deadline") from None
        except asyncio.CancelledError:
            self._abandon(job)
            task = asyncio.current_task()
            if cancel.cancelled and (task is None or not task.cancelling()):
                raise OperationCancelled(cancel.reason or "cancelled") from None
            raise  # the task itself was cancelled (a hard timer): let asyncio see it
        finally:
            unregister()

    def close(self) -> None:
        """Stop taking calls; queued ones are dropped, running ones finish on their own."""
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._interrupts is not None:
            self._interrupts.shutdown(wait=False)

    def _abandon(self, job: _Job[object]) -> None:
        if job.abandon() and self._interrupts is not None and self._interrupt is not None:
            try:
                self._interrupts.submit(job.interrupt, self._interrupt)
            except RuntimeError:  # closed meanwhile: the store is closing its connection
                _log.debug("store-call interrupt skipped: executor closed")
