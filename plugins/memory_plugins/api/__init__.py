"""The host API: open the memory and drive it from async code or, through `SyncMemory`, sync code.

An async host (R-HOST-1)::

    memory = await open_memory_async("memory-data", tape=my_tape)
    runtime = memory.session("assistant", chat_id)
    turn = await runtime.prepare_turn(message_id, user_text)
    reply = await llm(place(turn, user_text))           # memory first, the user's words last
    runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
    ...
    await memory.aclose()

A sync host uses `SyncMemory`, which owns a private event loop thread. `open_memory` itself
is synchronous today (it only opens local files and builds objects); `open_memory_async`
runs it off the caller's event loop so a slow model load never stalls other tasks, and
keeps async hosts source-compatible if opening ever has to await.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from memory_adapters.tapes import InMemoryTape
from memory_core.ports.tape import EntryRole
from memory_core.services.memory import MemoryService
from memory_core.services.read.runtime import MemoryRuntime, TurnContribution, place
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_plugins.api.loop import PathLike
from memory_plugins.api.mirrors import (
    SyncControls,
    SyncDiagnostics,
    SyncDirectives,
    SyncRankings,
    SyncRecords,
    SyncTools,
    SyncTurn,
    SyncUpkeep,
)
from memory_plugins.bootstrap import Clock, PortOverrides, open_memory
from memory_plugins.config import MemoryConfig
from memory_plugins.registry import PluginRegistry

# Everything a host needs comes from this one module (the README's host imports nothing
# else): the door, the turn's values, and the in-memory tape that stands in for a host's own
# message store until it writes a tape adapter.
__all__ = [
    "EntryRole",
    "InMemoryTape",
    "MemoryRuntime",
    "MemoryService",
    "SyncMemory",
    "TurnContribution",
    "TurnOutcome",
    "TurnStatus",
    "open_memory",
    "open_memory_async",
    "place",
]


async def open_memory_async(
    data_dir: PathLike | None = None,
    *,
    config: MemoryConfig | PathLike | None = None,
    tape: object | None = None,
    clock: Clock | None = None,
    overrides: PortOverrides | Mapping[str, object] | None = None,
    plugins: Iterable[object] = (),
    registry: PluginRegistry | None = None,
    strict_plugins: bool = False,
) -> MemoryService:
    """`open_memory` for async hosts: same arguments, run in a worker thread so that plugin
    loading and a local model's start-up do not block the event loop. Then finishes any
    agent clear a crash interrupted, one agent at a time (R-FORGET-3): until it is done,
    that agent's claims are neither readable nor writable anyway."""
    memory = await asyncio.to_thread(
        open_memory,
        data_dir,
        config=config,
        tape=tape,
        clock=clock,
        overrides=overrides,
        plugins=plugins,
        registry=registry,
        strict_plugins=strict_plugins,
    )
    await memory.resume_clears()
    return memory


# One mirror per facade part, in the facade's order (memory_core.services.memory.facade); their
# common base, SyncLoop, owns the loop and the service.
class SyncMemory(
    SyncTools,
    SyncRecords,
    SyncControls,
    SyncDirectives,
    SyncUpkeep,
    SyncDiagnostics,
    SyncRankings,
    SyncTurn,
):
    """A `MemoryService` for synchronous hosts: every call runs on a private event loop.

    Limits, by design:

    - Each call blocks the calling thread until it is done. Calls from several threads are
      served one loop step at a time on the one private loop — right for a chat app or a
      script, not for a server under load (use the async API there).
    - Background work (extraction after `after_turn_settled`, embedding) runs on the private
      loop between and during your calls; `close()` waits for it before closing the stores.
    - The tape you pass is read on the loop thread while you write to it from yours, so it
      must be thread-safe (the first-party tapes are).
    - Never call a `SyncMemory` from code that itself runs on its loop (a plugin, a tape
      method): that would wait for itself, so it raises RuntimeError instead.
    - Returned values are frozen attrs values, safe to keep anywhere. The underlying
      `service` belongs to the loop: reach it only through `run(...)`.
    - `call_timeout` (seconds, None = no limit) bounds each call; a call that overruns is
      cancelled and raises TimeoutError. Turns have their own soft deadline regardless.
    """
