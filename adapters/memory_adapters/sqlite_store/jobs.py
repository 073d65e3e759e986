"""Driving an agent clear (R-FORGET-3) from an event loop: begin (or resume), batches with
a yield between each, vector cleanup, the job's removal. The clear job itself — its
batches, fence and phases — is the SQL claim store's (`sql_claims.jobs`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from memory_adapters.sql_claims.jobs import MAX_CLEAR_BATCH
from memory_core.ports.claims import ClaimStore, ClearPhase, ClearProgress

__all__ = ["MAX_CLEAR_BATCH", "resume_pending_clears", "run_clear"]

_log = logging.getLogger(__name__)


async def _yield_to_loop() -> None:
    await asyncio.sleep(0)


async def run_clear(
    store: ClaimStore,
    agent_id: str,
    *,
    now: datetime,
    batch_size: int = MAX_CLEAR_BATCH,
    yield_between: Callable[[], Awaitable[None]] = _yield_to_loop,
    on_progress: Callable[[ClearProgress], None] | None = None,
    vector_cleanup: Callable[[str], Awaitable[None]] | None = None,
) -> ClearProgress:
    """Drive a clear to the end: begin (or resume), batches with a yield between each, then
    vector cleanup and the job's removal. A failing vector cleanup is logged and deferred
    (R-VEC-4 removes orphans at the next warm-up); the job still finishes."""
    progress = store.begin_clear(agent_id, now=now)
    while progress.phase is ClearPhase.CLAIMS:
        progress = store.run_clear_batch(agent_id, batch_size=batch_size)
        if on_progress is not None:
            on_progress(progress)
        await yield_between()
    if vector_cleanup is not None:
        try:
            await vector_cleanup(agent_id)
        except Exception as exc:  # deferred, never fatal: the claims are already gone
            _log.warning("vector cleanup deferred after clear: %s", type(exc).__name__)
    store.finish_clear(agent_id)
    done = ClearProgress(
        agent_id=agent_id, phase=ClearPhase.DONE, removed_count=progress.removed_count
    )
    if on_progress is not None:
        on_progress(done)
    return done


async def resume_pending_clears(
    store: ClaimStore,
    *,
    now: datetime,
    yield_between: Callable[[], Awaitable[None]] = _yield_to_loop,
    on_progress: Callable[[ClearProgress], None] | None = None,
    vector_cleanup: Callable[[str], Awaitable[None]] | None = None,
) -> list[ClearProgress]:
    """Startup recovery: every persisted job, oldest first, one agent at a time."""
    finished = []
    for job in store.pending_clears():
        finished.append(
            await run_clear(
                store,
                job.agent_id,
                now=now,
                yield_between=yield_between,
                on_progress=on_progress,
                vector_cleanup=vector_cleanup,
            )
        )
    return finished
