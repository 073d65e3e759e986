"""The store's clear steps, driven through the port as the tests need them.

Not a second clear runner: production clears only through `MemoryService.clear`, which
adds the write fence, the yield between batches, the vector drop and the checkpoint. These
tests check what the store itself promises of the job's batches, fence and phases."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memory_core.ports.claims import ClaimStore, ClearPhase, ClearProgress


async def run_clear(
    store: ClaimStore,
    agent_id: str,
    *,
    now: datetime,
    on_progress: Callable[[ClearProgress], None] | None = None,
) -> ClearProgress:
    """Begin (or resume) the agent's clear job and run its batches to the end."""
    progress = store.begin_clear(agent_id, now=now)
    while progress.phase is ClearPhase.CLAIMS:
        progress = store.run_clear_batch(agent_id)
        if on_progress is not None:
            on_progress(progress)
    store.finish_clear(agent_id)
    return progress
