"""How a command reaches memory: through `open_memory`, the one composition root, then the
`MemoryService` it returns — never a store of its own (R-ARCH-5, R-HOST-2).

`call(ctx, work)` opens the configured memory, runs `work(memory)` on an event loop (the
service's locks and background embedding live there) and closes it again, waiting for
what the call scheduled — so a `remember` is embedded before the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from memory_core.services.memory import MemoryService
from memory_plugins.api import open_memory_async
from memory_plugins.bootstrap import open_memory
from memory_plugins.cli.context import CommandContext
from memory_plugins.config import MemoryConfig

__all__ = ["call", "opened"]

T = TypeVar("T")


@contextlib.asynccontextmanager
async def opened(
    ctx: CommandContext,
    *,
    config: MemoryConfig | None = None,
    tape: object | None = None,
    resume_clears: bool = True,
) -> AsyncIterator[MemoryService]:
    """The configured memory, closed on exit. `resume_clears=False` opens it as an
    observer: interrupted clears stay pending, so `doctor` can report them."""
    config = config or ctx.config
    registry = ctx.plugins.registry
    if resume_clears:
        memory = await open_memory_async(ctx.data_dir, config=config, tape=tape, registry=registry)
    else:
        memory = await asyncio.to_thread(
            open_memory, ctx.data_dir, config=config, tape=tape, registry=registry
        )
    async with contextlib.aclosing(memory):
        yield memory


def call(ctx: CommandContext, work: Callable[[MemoryService], Awaitable[T] | T]) -> T:
    """`work(memory)` on a freshly opened memory; an awaitable result is awaited."""

    async def run() -> T:
        async with opened(ctx) as memory:
            result = work(memory)
            return await result if inspect.isawaitable(result) else result

    return asyncio.run(run())
