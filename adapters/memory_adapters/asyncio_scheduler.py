"""`TaskScheduler` on asyncio: background tasks held until they settle, and asyncio locks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memory_core.domain.errors import DeadlineExceeded

__all__ = ["AsyncioScheduler", "AsyncioTaskHandle"]

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


class AsyncioScheduler:
    """Spawns on the running loop. Holds a strong reference to every task until it settles:
    the loop keeps only weak ones, and a collected task would silently stop mid-write."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Callable[[], Awaitable[None]], *, name: str) -> AsyncioTaskHandle:
        loop = asyncio.get_running_loop()
        task = loop.create_task(_run(work), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._settled)
        return AsyncioTaskHandle(task)

    def make_lock(self) -> asyncio.Lock:
        return asyncio.Lock()

    async def run_within(self, work: Callable[[], Awaitable[T]], seconds: float) -> T:
        try:
            async with asyncio.timeout(max(0.0, seconds)):
                return await work()
        except TimeoutError:
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
