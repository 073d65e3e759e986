"""The two `BlockingCalls` runners with fake calls: results and errors pass through unchanged;
a deadline or a cancelled token ends the wait at once, skips a call not yet started and asks
the store to interrupt one still running, and the loop keeps turning meanwhile (R-READ-1)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from memory_adapters.clocks import MonotonicClock
from memory_adapters.offload import InlineCalls, ThreadedCalls
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled, StoreError
from memory_core.ports.blocking import BlockingCalls

CLOCK = MonotonicClock()
# Generous on purpose: these check that the wait ends at the deadline, not how fast we are.
MARGIN_S = 3.0


def deadline(seconds: float = 30.0) -> Deadline:
    return Deadline.after(CLOCK, seconds)


class Blocked:
    """A store call that blocks until interrupted or released; records who interrupted it."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.thread: int | None = None
        self.interrupted: list[int] = []
        self.finished = threading.Event()

    def __call__(self) -> str:
        self.thread = threading.get_ident()
        self.started.set()
        try:
            if not self.release.wait(timeout=30):
                raise AssertionError("never released")
            if self.interrupted:
                raise DeadlineExceeded("cancelled by the server")
            return "late"
        finally:
            self.finished.set()

    def interrupt(self, thread_id: int) -> None:
        self.interrupted.append(thread_id)
        self.release.set()


@pytest.fixture
def threaded() -> Iterator[Callable[..., ThreadedCalls]]:
    made: list[ThreadedCalls] = []

    def make(**kwargs: object) -> ThreadedCalls:
        kwargs.setdefault("workers", 1)
        kwargs.setdefault("interrupt", None)
        runner = ThreadedCalls(**kwargs)  # type: ignore[arg-type]
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.close()


def test_both_runners_satisfy_the_port() -> None:
    assert isinstance(InlineCalls(), BlockingCalls)
    runner = ThreadedCalls(workers=1, interrupt=None)
    try:
        assert isinstance(runner, BlockingCalls)
    finally:
        runner.close()


@pytest.mark.parametrize("kind", ["inline", "threaded"])
def test_result_and_the_calls_own_error_pass_through_unchanged(
    kind: str, threaded: Callable[..., ThreadedCalls]
) -> None:
    runner: BlockingCalls = InlineCalls() if kind == "inline" else threaded()
    own = StoreError("the store's own failure")

    def fails(error: BaseException) -> Callable[[], None]:
        def call() -> None:
            raise error

        return call

    async def go() -> None:
        answer = await runner.run(lambda: 41 + 1, deadline=deadline(), cancel=CancellationToken())
        assert answer == 42
        with pytest.raises(StoreError) as raised:
            await runner.run(fails(own), deadline=deadline(), cancel=CancellationToken())
        assert raised.value is own
        # A call's own timeout is not the caller's deadline (asyncio copies this one type).
        with pytest.raises(TimeoutError, match="socket") as timed_out:
            await runner.run(
                fails(TimeoutError("socket")), deadline=deadline(), cancel=CancellationToken()
            )
        assert not isinstance(timed_out.value, DeadlineExceeded)

    asyncio.run(go())


@pytest.mark.parametrize("kind", ["inline", "threaded"])
def test_nothing_starts_past_the_deadline_or_after_cancellation(
    kind: str, threaded: Callable[..., ThreadedCalls]
) -> None:
    runner: BlockingCalls = InlineCalls() if kind == "inline" else threaded()
    calls: list[str] = []
    cancelled = CancellationToken()
    cancelled.cancel("caller gave up")

    async def go() -> None:
        with pytest.raises(DeadlineExceeded):
            await runner.run(
                lambda: calls.append("x"), deadline=deadline(0), cancel=CancellationToken()
            )
        with pytest.raises(OperationCancelled, match="caller gave up"):
            await runner.run(lambda: calls.append("x"), deadline=deadline(), cancel=cancelled)

    asyncio.run(go())
    assert calls == []


def test_an_inline_call_lets_other_ready_work_run_first_which_may_still_stop_it() -> None:
    """R-READ-1: an inline call suspends its caller first. Store calls otherwise never
    suspended a turn, so its whole run was one step of the loop, and a hard timer that had
    fired waited behind every such step queued with it. A token cancelled by the work that
    ran meanwhile still keeps the call from starting."""
    runner = InlineCalls()
    seen: list[str] = []
    token = CancellationToken()

    async def go() -> None:
        loop = asyncio.get_running_loop()
        loop.call_soon(seen.append, "other")
        await runner.run(lambda: seen.append("call"), deadline=deadline(), cancel=token)
        loop.call_soon(token.cancel, "timer fired")
        with pytest.raises(OperationCancelled, match="timer fired"):
            await runner.run(lambda: seen.append("late call"), deadline=deadline(), cancel=token)

    asyncio.run(go())
    assert seen == ["other", "call"]


def test_threaded_runs_off_the_loop_thread(threaded: Callable[..., ThreadedCalls]) -> None:
    runner = threaded()

    async def go() -> int:
        return await runner.run(
            threading.get_ident, deadline=deadline(), cancel=CancellationToken()
        )

    assert asyncio.run(go()) != threading.get_ident()


def test_a_deadline_ends_the_wait_at_once_and_interrupts_the_running_call(
    threaded: Callable[..., ThreadedCalls],
) -> None:
    blocked = Blocked()
    runner = threaded(interrupt=blocked.interrupt)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def go() -> float:
        beat = asyncio.create_task(ticker())
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            await runner.run(blocked, deadline=deadline(0.3), cancel=CancellationToken())
        elapsed = time.monotonic() - started
        beat.cancel()
        return elapsed

    elapsed = asyncio.run(go())
    assert elapsed < 0.3 + MARGIN_S
    assert ticks > 0  # the loop kept running other work while the call blocked
    assert blocked.finished.wait(MARGIN_S)
    assert blocked.interrupted == [blocked.thread]  # the worker's own call, nothing else


def test_a_cancelled_token_ends_the_wait_and_interrupts_the_running_call(
    threaded: Callable[..., ThreadedCalls],
) -> None:
    blocked = Blocked()
    runner = threaded(interrupt=blocked.interrupt)
    token = CancellationToken()

    async def go() -> None:
        async def cancel_soon() -> None:
            while not blocked.started.is_set():
                await asyncio.sleep(0.01)
            token.cancel("turn over")

        canceller = asyncio.create_task(cancel_soon())
        with pytest.raises(OperationCancelled, match="turn over"):
            await runner.run(blocked, deadline=deadline(), cancel=token)
        await canceller

    asyncio.run(go())
    assert blocked.finished.wait(MARGIN_S)
    assert blocked.interrupted == [blocked.thread]


def test_a_call_queued_behind_a_stuck_one_is_dropped_not_run_late(
    threaded: Callable[..., ThreadedCalls],
) -> None:
    """The next turn is protected: it waits no longer than its own deadline, and its call
    never runs after it gave up, once the stuck call ends."""
    stuck = Blocked()
    runner = threaded()  # no interrupt: the stuck call ends only when released
    ran: list[str] = []

    async def go() -> None:
        first = asyncio.create_task(
            runner.run(stuck, deadline=deadline(), cancel=CancellationToken())
        )
        while not stuck.started.is_set():
            await asyncio.sleep(0.01)
        with pytest.raises(DeadlineExceeded):
            await runner.run(
                lambda: ran.append("late"), deadline=deadline(0.2), cancel=CancellationToken()
            )
        stuck.release.set()
        assert await first == "late"
        # The worker is free again: a new call runs normally.
        assert await runner.run(lambda: "next", deadline=deadline(), cancel=CancellationToken())

    asyncio.run(go())
    assert ran == []


def test_cancelling_the_awaiting_task_propagates_and_interrupts(
    threaded: Callable[..., ThreadedCalls],
) -> None:
    """A hard timer cancels the task itself: asyncio's CancelledError, not a domain error."""
    blocked = Blocked()
    runner = threaded(interrupt=blocked.interrupt)

    async def go() -> None:
        task = asyncio.create_task(
            runner.run(blocked, deadline=deadline(), cancel=CancellationToken())
        )
        while not blocked.started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert blocked.finished.wait(MARGIN_S)
    assert blocked.interrupted == [blocked.thread]


def test_a_closed_runner_refuses_calls(threaded: Callable[..., ThreadedCalls]) -> None:
    runner = threaded()
    runner.close()

    async def go() -> None:
        with pytest.raises(StoreError, match="closed"):
            await runner.run(lambda: None, deadline=deadline(), cancel=CancellationToken())

    asyncio.run(go())


def test_a_closed_threaded_runner_refuses_new_calls() -> None:
    """R-HOST-1: the service closes its runner before the store; a call after that is a
    typed StoreError, never a thread started on a closing store."""
    calls = ThreadedCalls(workers=1, interrupt=None)
    calls.close()
    calls.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        asyncio.run(calls.run(lambda: 1, deadline=deadline(), cancel=CancellationToken()))
