"""Run one request as a task that the deadline and the token can end (R-PROV-3, R-ARCH-6).

The request runs in its own task so that neither a deadline nor a cancellation has to wait
for the remote side: the caller is answered at once (DeadlineExceeded / OperationCancelled)
and the task is cancelled, getting a short grace to close its connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled

__all__ = ["run_cancellable"]

T = TypeVar("T")


def _retrieve(task: asyncio.Future[object]) -> None:
    # Whatever the abandoned task ends with has been answered for already.
    if not task.cancelled():
        task.exception()


async def run_cancellable(
    make: Callable[[], Awaitable[T]],
    *,
    deadline: Deadline,
    cancel: CancellationToken,
    what: str,
    grace_seconds: float = 1.0,
) -> T:
    if cancel.cancelled:
        raise OperationCancelled(f"{what} cancelled")
    remaining = deadline.remaining()
    if remaining <= 0:
        raise DeadlineExceeded(f"{what} exceeded its deadline")
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(make())
    task.add_done_callback(_retrieve)
    stopped: asyncio.Future[None] = loop.create_future()

    def stop() -> None:
        if not stopped.done():
            stopped.set_result(None)
        task.cancel()

    # A token may be cancelled from any thread; the loop's objects only from the loop.
    unregister = cancel.on_cancel(lambda: loop.call_soon_threadsafe(stop))
    try:
        done, _ = await asyncio.wait(
            {task, stopped}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
        )
    except BaseException:
        task.cancel()  # our own caller was cancelled: take the request down with it
        raise
    finally:
        unregister()
        stopped.cancel()
    if task not in done:
        task.cancel()
        await asyncio.wait({task}, timeout=grace_seconds)
        if cancel.cancelled:
            raise OperationCancelled(f"{what} cancelled")
        raise DeadlineExceeded(f"{what} exceeded its deadline")
    if cancel.cancelled or task.cancelled():
        raise OperationCancelled(f"{what} cancelled")
    return task.result()
