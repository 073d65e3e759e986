"""A batch's next embedding request, sent while the provider answers the current one (issue
15): what a request costs before the model runs — a local model's tokenizer, a network round
trip — then overlaps the request before it. `ProviderGateway.embed_batch` decides when."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs

from memory_core.domain.errors import OperationCancelled
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.services.providers.gateway.answers import Vectors

__all__ = ["Ahead"]


@attrs.define(eq=False)
class Ahead:
    """A batch's next request, sent while the current one is answered."""

    handle: TaskHandle | None = None
    answer: Vectors | None = None
    error: BaseException | None = None

    @classmethod
    def send(cls, scheduler: TaskScheduler, request: Callable[[], Awaitable[Vectors]]) -> Ahead:
        ahead = cls()

        async def work() -> None:
            try:
                ahead.answer = await request()
            except BaseException as exc:  # kept for `answered`, which raises it
                ahead.error = exc
                if not isinstance(exc, Exception):
                    raise

        ahead.handle = scheduler.spawn(work, name="memory-embed-request")
        return ahead

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    async def answered(self) -> Vectors:
        assert self.handle is not None
        await self.handle.wait()
        if self.error is not None:
            raise self.error
        if self.answer is None:  # cancelled before it ran
            raise OperationCancelled("embedding request cancelled")
        return self.answer
