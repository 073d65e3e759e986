"""Native calls under a deadline: a pooled worker, `interrupt()` on overrun, quarantine on a hang.

Every DuckDB call runs on one of the store's daemon workers (`workers.Workers`: a bounded
set, reused) so the event loop never blocks and a stuck call can never hold up interpreter
exit. A call still waiting for a worker when its deadline passes is withdrawn and raises
DeadlineExceeded at once. When the deadline passes or the token is cancelled,
the guard sets the call's abort flag and interrupts its connection (repeatedly, so a statement
that starts just after the first interrupt is caught too), then waits a grace period for the
thread to settle. A call that settles becomes its result or a typed error; one that does not
settle, or fails with a fatal native error, raises StoreQuarantined, on which the store
quarantines the agent — never a hang (R-VEC-3); its worker is written off and a spare may
take its place, so hung calls cost at most `workers + spare` threads in all.

Timing: the deadline's remaining seconds at the start of the call become a budget on the
event loop's clock. In production the deadline's InfraClock is the same monotonic clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TypeVar

import duckdb

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    AgentMemoryError,
    DeadlineExceeded,
    OperationCancelled,
    StoreError,
    StoreQuarantined,
)

from .schema import is_fatal
from .workers import Job, Workers

__all__ = ["AbortFlag", "Aborted", "NativeGuard", "translate"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

# How often an overrunning call is interrupted again while the guard waits for it to settle.
_REINTERRUPT_SECONDS = 0.02


class Aborted(Exception):
    """Raised inside a worker by `AbortFlag.check()` once the guard gave up on the call."""


class AbortFlag:
    """Checked by worker code between native statements and between pages."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    @property
    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Aborted()


class NativeGuard:
    """Runs blocking callables with a deadline, cancellation and a grace period."""

    def __init__(self, *, grace_seconds: float, workers: int, spare: int) -> None:
        if grace_seconds < 0:
            raise ValueError("grace_seconds must be >= 0")
        self._grace = grace_seconds
        self.workers = Workers(size=workers, spare=spare, name="duckdb-vectors")

    def close(self) -> None:
        """Let the idle workers go (a hung one stays, a daemon, until its call returns)."""
        self.workers.close()

    async def run(
        self,
        work: Callable[[AbortFlag], T],
        *,
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
        interrupt: Callable[[], None] | None = None,
    ) -> T:
        """`work(abort)` in a worker thread; its result, or a typed error."""
        cancel.raise_if_cancelled()
        deadline.raise_if_expired(what)
        budget = deadline.remaining()
        loop = asyncio.get_running_loop()
        settled: asyncio.Future[T] = loop.create_future()
        abort = AbortFlag()
        woken = asyncio.Event()

        def worker() -> tuple[bool, object]:
            try:
                return (True, work(abort))
            except BaseException as exc:  # handed to the awaiting task, never lost
                return (False, exc)

        def deliver(outcome: object) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
                loop.call_soon_threadsafe(_settle, settled, outcome)

        unregister = cancel.on_cancel(lambda: loop.call_soon_threadsafe(woken.set))
        job = Job(worker, deliver)
        try:
            self.workers.submit(job)
        except RuntimeError:
            unregister()
            raise StoreError(f"vector store call {what}: the store is closed") from None
        wake = asyncio.ensure_future(woken.wait())
        try:
            await asyncio.wait({settled, wake}, timeout=budget, return_when="FIRST_COMPLETED")
        except asyncio.CancelledError:
            # The awaiting task itself was cancelled: stop the native call before unwinding.
            if not job.withdraw():
                await self._stop(job, settled, abort, interrupt, what)
            raise
        finally:
            unregister()
            wake.cancel()
        if settled.done():
            return self._outcome(settled, what, None)
        reason = "cancelled" if cancel.cancelled else "deadline"
        if job.withdraw():
            # Never started (every worker busy or hung): nothing to stop, nothing to wait for.
            if reason == "cancelled":
                raise OperationCancelled(f"vector store call {what} was cancelled")
            raise DeadlineExceeded(f"vector store call {what} exceeded its deadline")
        await self._stop(job, settled, abort, interrupt, what)
        return self._outcome(settled, what, reason)

    async def run_pooled(
        self,
        executor: Executor,
        work: Callable[[], T],
        *,
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> T:
        """`work()` on a long-lived pool thread, for work that cannot hang but cannot be
        interrupted either (numpy scans: bounded by memory bandwidth). A persistent thread
        matters: BLAS sets itself up per calling thread, ~4 ms on first use. Past the
        deadline, or once cancelled, the caller stops waiting and the result is dropped."""
        cancel.raise_if_cancelled()
        deadline.raise_if_expired(what)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(executor, work)
        # A bare future, not an Event and a task to wait on it: this runs on every turn.
        woken: asyncio.Future[None] = loop.create_future()
        unregister = cancel.on_cancel(lambda: loop.call_soon_threadsafe(_wake, woken))
        try:
            await asyncio.wait(
                {future, woken}, timeout=deadline.remaining(), return_when="FIRST_COMPLETED"
            )
        finally:
            unregister()
            woken.cancel()
        if future.done():
            return future.result()
        future.cancel()  # dropped if still queued; a running scan just finishes unseen
        if cancel.cancelled:
            raise OperationCancelled(f"vector store call {what} was cancelled")
        raise DeadlineExceeded(f"vector store call {what} exceeded its deadline")

    async def _stop(
        self,
        job: Job,
        settled: asyncio.Future[T],
        abort: AbortFlag,
        interrupt: Callable[[], None] | None,
        what: str,
    ) -> None:
        abort.set()
        remaining = self._grace
        while True:
            if interrupt is not None:
                with contextlib.suppress(Exception):
                    interrupt()
            step = min(_REINTERRUPT_SECONDS, remaining)
            await asyncio.wait({settled}, timeout=step)
            remaining -= step
            if settled.done() or remaining <= 0:
                break
        if not settled.done():
            _log.error("vector store call %s did not settle within %.1fs", what, self._grace)
            self.workers.abandoned(job)
            raise StoreQuarantined(f"vector store call {what} hung and was quarantined")

    def _outcome(self, settled: asyncio.Future[T], what: str, reason: str | None) -> T:
        ok, value = settled.result()
        if ok:
            # A call that completed despite the interrupt did its work: report it truthfully.
            return value  # type: ignore[return-value]
        exc = value
        assert isinstance(exc, BaseException)
        if isinstance(exc, Aborted | duckdb.InterruptException):
            if reason == "cancelled":
                raise OperationCancelled(f"vector store call {what} was cancelled") from None
            if reason == "deadline":
                raise DeadlineExceeded(f"vector store call {what} exceeded its deadline") from None
            raise StoreError(f"vector store call {what} was interrupted") from None
        translated = translate(exc, what)
        if translated is exc:
            raise exc
        raise translated from exc


def translate(exc: BaseException, what: str) -> BaseException:
    """A worker's exception as a domain error; library exceptions never leak."""
    if isinstance(exc, AgentMemoryError):
        return exc
    if isinstance(exc, duckdb.Error):
        if is_fatal(exc):
            return StoreQuarantined(
                f"vector store call {what} failed fatally ({type(exc).__name__})"
            )
        return StoreError(f"vector store call {what} failed ({type(exc).__name__})")
    if isinstance(exc, OSError):
        return StoreError(f"vector store call {what} failed ({type(exc).__name__})")
    return exc


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


def _settle(settled: asyncio.Future[T], outcome: object) -> None:
    if not settled.done():
        settled.set_result(outcome)  # type: ignore[arg-type]
