"""`TaskScheduler` on asyncio: background tasks held until they settle, asyncio locks, and
a hard timer that allows for how late the loop runs."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memory_core.domain.errors import DeadlineExceeded

__all__ = ["AsyncioScheduler", "AsyncioTaskHandle", "LoopLateness"]

_log = logging.getLogger(__name__)

T = TypeVar("T")


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


class AsyncioScheduler:
    """Spawns on the running loop. Holds a strong reference to every task until it settles:
    the loop keeps only weak ones, and a collected task would silently stop mid-write."""

    def __init__(self, *, lateness: LoopLateness | None = None) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._lateness = lateness or LoopLateness()

    def spawn(self, work: Callable[[], Awaitable[None]], *, name: str) -> AsyncioTaskHandle:
        loop = asyncio.get_running_loop()
        task = loop.create_task(_run(work), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._settled)
        return AsyncioTaskHandle(task)

    def make_lock(self) -> asyncio.Lock:
        return asyncio.Lock()

    async def run_within(self, work: Callable[[], Awaitable[T]], seconds: float) -> T:
        armed = self._lateness.armed(max(0.0, seconds))
        if armed is None:
            raise DeadlineExceeded(f"the loop runs too late to finish within {seconds:.3f} s")
        fires = time.monotonic() + armed
        try:
            async with asyncio.timeout(armed):
                return await work()
        except TimeoutError:
            # How long after its firing time the timer gave control back: the loop's own
            # lateness, whatever the timer was armed to.
            self._lateness.saw(time.monotonic() - fires)
            raise DeadlineExceeded(f"work did not finish within {seconds:.3f} s") from None

    async def yield_now(self) -> None:
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
