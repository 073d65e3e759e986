"""`TaskScheduler` on asyncio: background tasks held until they settle, asyncio locks, and
a hard timer that allows for how late the loop runs.

Background work gives way to the host's. asyncio has no priorities: every loop iteration
runs every step that is ready, so a loop short of CPU (a machine shared with other work)
spent most of each iteration on the background — ingestion's planning and inserts, working
projection rebuilds, embedding drains — and a turn, which needs a dozen iterations, took
seconds per iteration (a 20-agent soak beside 8 busy processes on 2 cores: 12 s loop stalls,
R-READ-1). So work started with `spawn` runs marked as background (a context variable its
own child tasks inherit), and at each point where it yields — `yield_now`, a lock
acquisition, a store call through a runner given `yield_now` — it waits for `StepAdmission`,
which lets one background step through per loop iteration. The host's tasks (turns, its
writes) never wait there. An idle loop iterates in microseconds, so background throughput
is unchanged when nothing else runs; on a busy loop an iteration carries the ready
foreground steps and one background step. The admission always moves (one waiter per
iteration, whatever anyone holds), so waiting for it cannot deadlock; cancellation ends
the wait.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memory_core.domain.errors import DeadlineExceeded

__all__ = [
    "AsyncioScheduler",
    "AsyncioTaskHandle",
    "LoopHeartbeat",
    "LoopLateness",
    "StepAdmission",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")

# True inside work started by `AsyncioScheduler.spawn` (and the tasks it creates).
_BACKGROUND: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "agent_memory_background", default=False
)


class StepAdmission:
    """Lets one waiting background step through per loop iteration, in arrival order.

    A release callback runs once per iteration while anyone waits (`call_soon` puts it in
    the next iteration) and wakes the oldest waiter, whose step then runs in the iteration
    after: the background's share of a busy loop is one step per iteration, and its wait
    is as long as the steps queued ahead of it, never a fixed sleep.
    """

    def __init__(self) -> None:
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.append(waiter)
        if self._loop is not loop:  # nothing scheduled on this loop (a new one, or none)
            self._loop = loop
            loop.call_soon(self._release)
        try:
            await waiter
        except asyncio.CancelledError:
            waiter.cancel()  # the release skips it
            raise

    def _release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done() and waiter.get_loop() is self._loop:
                waiter.set_result(None)
                break
        if self._waiters and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon(self._release)
        else:
            self._loop = None


class _YieldingLock:
    """An asyncio lock whose background acquirers then pass `StepAdmission`: the step that
    follows an acquisition (a commit, a rebuild) is a background step like any other.

    The lock is taken first and the admission awaited holding it: a free lock is still
    taken without a suspension, so a caller that picks a lock because it is not `locked()`
    (the maintenance slots) gets that lock and not one another caller took meanwhile."""

    __slots__ = ("_admission", "_lock")

    def __init__(self, admission: StepAdmission) -> None:
        self._lock = asyncio.Lock()
        self._admission = admission

    async def acquire(self) -> bool:
        await self._lock.acquire()
        if _BACKGROUND.get():
            try:
                await self._admission.wait()
            except BaseException:  # cancelled while waiting: the caller never held it
                self._lock.release()
                raise
        return True

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()


class AsyncioTaskHandle:
    """`TaskHandle` over an `asyncio.Task`."""

    __slots__ = ("_task",)

    def __init__(self, task: asyncio.Task[None]) -> None:
        self._task = task

    @property
    def done(self) -> bool:
        return self._task.done()

    def cancel(self) -> None:
        self._task.cancel()

    async def wait(self) -> None:
        # asyncio.wait never raises the task's exception or its cancellation.
        await asyncio.wait({self._task})


class LoopLateness:
    """How late this loop's timers have been seen to return, recently.

    asyncio's timer is cooperative: once it fires, the timed-out work resumes only when the
    loop gets to it, behind every step queued before it, so on a loop starved of CPU (twenty
    agents' turns and extraction, a machine shared with others) `run_within(work, 4)` gave
    control back after 5 or 6 s. Each overrun is remembered (the largest recent one, halving
    every `half_life_s` once the loop keeps up again), and later timers fire that much
    earlier, less `allowance_s` of the margin the caller may spend anyway. Work that would
    keep less than `floor` of its time that way is not started at all: it could not finish
    and still give control back in time, and not starting it is also the load the starved
    loop sheds. A loop that keeps up never times out late, so it learns nothing and its
    timers fire on time.

    A timeout teaches only after a turn has already overrun, and twenty concurrent turns
    then overrun together. So while timed work is in flight the scheduler also runs a
    heartbeat (`LoopHeartbeat`) whose own lateness is seen as well: a timed-out task needs
    the timer's callback and then its own resumption, each waiting up to one loop
    iteration, so an iteration running `lag` late is seen as an overrun of `2 * lag`
    (seeing only `lag` left 6 turns of 2,747 past the deadline + 1 s in the starved soak).
    """

    def __init__(
        self,
        *,
        allowance_s: float = 0.5,
        half_life_s: float = 10.0,
        floor: float = 0.5,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._allowance_s = allowance_s
        self._half_life_s = half_life_s
        self._floor = floor
        self._monotonic = monotonic
        self._late_s = 0.0
        self._seen_at = monotonic()

    def current(self) -> float:
        """The remembered overrun in seconds, decayed to now."""
        now = self._monotonic()
        self._late_s *= 0.5 ** ((now - self._seen_at) / self._half_life_s)
        self._seen_at = now
        return self._late_s

    def saw(self, overrun_s: float) -> None:
        """A timer gave control back `overrun_s` after it fired."""
        self._late_s = max(self.current(), overrun_s)

    def armed(self, seconds: float) -> float | None:
        """When to fire a timer asked for `seconds` from now; None when the loop runs too
        late for work of that length to start."""
        early = max(0.0, self.current() - self._allowance_s)
        if early > seconds * (1.0 - self._floor):
            return None
        return seconds - early


class LoopHeartbeat:
    """A timer every `interval_s` while `watch` holds it open, reporting how late it ran:
    the loop's current iteration time, measured before a turn's timer is late."""

    def __init__(self, seen: Callable[[float], None], *, interval_s: float = 0.1) -> None:
        self._seen = seen
        self._interval_s = interval_s
        self._watchers = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self) -> None:
        self._watchers += 1
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # none scheduled on this loop yet (or an old loop's)
            self._loop = loop
            self._arm(loop)

    def unwatch(self) -> None:
        self._watchers -= 1

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        due = loop.time() + self._interval_s
        loop.call_at(due, self._beat, loop, due)

    def _beat(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        if loop is not self._loop:
            return
        self._seen(max(0.0, loop.time() - due))
        if self._watchers > 0 and not loop.is_closed():
            self._arm(loop)
        else:
            self._loop = None


class AsyncioScheduler:
    """Spawns on the running loop. Holds a strong reference to every task until it settles:
    the loop keeps only weak ones, and a collected task would silently stop mid-write."""

    def __init__(self, *, lateness: LoopLateness | None = None) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._lateness = lateness or LoopLateness()
        self._admission = StepAdmission()
        lateness_seen = self._lateness.saw
        self._heartbeat = LoopHeartbeat(lambda lag: lateness_seen(2 * lag))

    def spawn(self, work: Callable[[], Awaitable[None]], *, name: str) -> AsyncioTaskHandle:
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        context.run(_BACKGROUND.set, True)
        task = loop.create_task(_run(work), name=name, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._settled)
        return AsyncioTaskHandle(task)

    def make_lock(self) -> _YieldingLock:
        return _YieldingLock(self._admission)

    async def run_within(self, work: Callable[[], Awaitable[T]], seconds: float) -> T:
        armed = self._lateness.armed(max(0.0, seconds))
        if armed is None:
            raise DeadlineExceeded(f"the loop runs too late to finish within {seconds:.3f} s")
        fires = time.monotonic() + armed
        self._heartbeat.watch()
        try:
            async with asyncio.timeout(armed):
                return await work()
        except TimeoutError:
            # How long after its firing time the timer gave control back: the loop's own
            # lateness, whatever the timer was armed to.
            self._lateness.saw(time.monotonic() - fires)
            raise DeadlineExceeded(f"work did not finish within {seconds:.3f} s") from None
        finally:
            self._heartbeat.unwatch()

    async def yield_now(self) -> None:
        """One loop turn for the host's work; for background work, until `StepAdmission`
        lets its next step through."""
        if _BACKGROUND.get():
            await self._admission.wait()
        else:
            await asyncio.sleep(0)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    @property
    def pending(self) -> int:
        """Tasks spawned and not yet settled."""
        return len(self._tasks)

    def _settled(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            # The type only: an exception message may quote claim or conversation content.
            _log.error("background task %s failed: %s", task.get_name(), type(error).__name__)


async def _run(work: Callable[[], Awaitable[None]]) -> None:
    # create_task needs a coroutine; `work` may return any awaitable.
    await work()
