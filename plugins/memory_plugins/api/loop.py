"""The private event loop behind `SyncMemory`: its thread, opening the service on it, and the
one way every mirrored call reaches the service (`run`)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import Any, Self, TypeVar

from memory_core.services.memory import MemoryService
from memory_plugins.bootstrap import Clock, PortOverrides, open_memory
from memory_plugins.config import MemoryConfig
from memory_plugins.registry import PluginRegistry

__all__ = ["PathLike", "SyncLoop"]

T = TypeVar("T")

_CALL_TIMEOUT = object()  # `_call`'s default: the instance's `call_timeout`

PathLike = str | os.PathLike[str]


class SyncLoop:
    """A `MemoryService` opened on a private event loop thread; `SyncMemory`'s mirrors call
    it through `run`."""

    def __init__(
        self,
        data_dir: PathLike | None = None,
        *,
        config: MemoryConfig | PathLike | None = None,
        tape: object | None = None,
        clock: Clock | None = None,
        overrides: PortOverrides | Mapping[str, object] | None = None,
        plugins: Iterable[object] = (),
        registry: PluginRegistry | None = None,
        strict_plugins: bool = False,
        call_timeout: float | None = None,
    ) -> None:
        self._timeout = call_timeout
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="agent-memory-loop", daemon=True
        )
        self._thread.start()

        async def build() -> MemoryService:
            # Built on the loop thread: the service spawns its background tasks there.
            memory = open_memory(
                data_dir,
                config=config,
                tape=tape,
                clock=clock,
                overrides=overrides,
                plugins=plugins,
                registry=registry,
                strict_plugins=strict_plugins,
            )
            try:
                # As `open_memory_async` does: an agent whose clear a crash interrupted
                # stays fenced (ClearInProgress) until the clear is finished (R-FORGET-3).
                await memory.resume_clears()
            except BaseException:
                await memory.aclose()
                raise
            return memory

        try:
            self._service = self._call(build(), timeout=None)
        except BaseException:
            self._stop_loop()
            raise

    def run(self, work: Callable[[MemoryService], Awaitable[T]]) -> T:
        """Run `await work(service)` on the memory's loop and return its result."""
        service = self._require_open()

        async def call() -> T:
            return await work(service)

        return self._call(call())

    def _run_sync(self, work: Callable[[MemoryService], T]) -> T:
        """Run a synchronous service method on the loop thread, like every other call:
        the service's state belongs to the loop."""

        async def call(memory: MemoryService) -> T:
            return work(memory)

        return self.run(call)

    def close(self) -> None:
        """Wait for background work, close providers and stores, stop the loop. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._service.aclose(), timeout=None)
        finally:
            self._stop_loop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _require_open(self) -> MemoryService:
        if self._closed:
            raise RuntimeError("SyncMemory is closed")
        return self._service

    def _call(
        self, coroutine: Coroutine[Any, Any, T], *, timeout: float | object | None = _CALL_TIMEOUT
    ) -> T:
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("SyncMemory called from its own event loop: use the async API")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        limit = self._timeout if timeout is _CALL_TIMEOUT else timeout
        try:
            return future.result(limit)  # type: ignore[arg-type]
        except TimeoutError:
            future.cancel()
            raise

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
