"""The scrub after a delete (R-PRIV-3): DuckDB frees a deleted row's blocks without zeroing
them, so the open file is rewritten with its live rows `scrub_delay_seconds` after a delete
(deletes in that window share one rewrite) while queries keep scanning the resident matrix.
The scrub marker covers a kill before it; closing, or the next open, finishes it instead.
`Agents` schedules scrubs through these methods."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, StoreError
from memory_core.ports.clock import InfraClock

from .agent import Agent
from .agent_store import AgentStore
from .files import StoreFiles
from .guard import AbortFlag
from .publish import StepHook, compact, open_v2

__all__ = ["ScrubMethods"]

_log = logging.getLogger(__name__)


class ScrubMethods:
    """Scrub scheduling over the concrete `Agents`' files, guard and locks."""

    root: Path | None
    closed: bool
    _clock: InfraClock
    _housekeeping: float
    _on_step: StepHook
    _files: Callable[[str], StoreFiles]
    run: Callable[..., Awaitable[Any]]

    def _init_scrubs(self, delay_seconds: float) -> None:
        self._scrub_delay = delay_seconds
        self._scrubs: dict[str, asyncio.Task[None]] = {}
        self._scrubs_waiting: set[str] = set()  # still in their delay: safe to cancel

    def scrub_soon(self, agent: Agent) -> None:
        """Rewrite the agent's file without its deleted rows `scrub_delay_seconds` from now,
        unless a scrub is already due. Call from the event loop after a delete."""
        if self.root is None or self.closed:
            return
        loop = asyncio.get_running_loop()
        due = self._scrubs.get(agent.agent_id)
        # A task of a loop that has since ended (a host running one `asyncio.run` after
        # another) never runs again: schedule on this one.
        if due is not None and not due.done() and due.get_loop() is loop:
            return
        self._scrubs[agent.agent_id] = loop.create_task(
            self._scrub_later(agent), name=f"vector-scrub:{agent.agent_id}"
        )

    async def _scrub_later(self, agent: Agent) -> None:
        self._scrubs_waiting.add(agent.agent_id)
        try:
            await asyncio.sleep(self._scrub_delay)
            self._scrubs_waiting.discard(agent.agent_id)
            async with agent.lock:
                store = agent.store
                # Closed or dropped meanwhile: its close compacted the file, or it is gone.
                if store is None or agent.quarantined or self.closed:
                    return
                if not self._files(agent.agent_id).scrub.exists():
                    return
                await self.run(
                    agent,
                    lambda abort: self._compact_open(agent, store, abort),
                    what="scrub",
                    deadline=Deadline.after(self._clock, self._housekeeping),
                    cancel=CancellationToken(),
                )
        except StoreError as exc:
            # The marker stays: the close or the next open rewrites the file instead.
            _log.warning("vector scrub deferred for agent=%s: %s", agent.agent_id, exc)
        except DeadlineExceeded:
            _log.warning("vector scrub deferred for agent=%s: deadline", agent.agent_id)
        finally:
            self._scrubs_waiting.discard(agent.agent_id)
            if self._scrubs.get(agent.agent_id) is asyncio.current_task():
                del self._scrubs[agent.agent_id]

    def _compact_open(self, agent: Agent, store: AgentStore, abort: AbortFlag) -> None:
        """Rewrite an open namespace's file with its live rows and reopen it. The matrix,
        certificate and generation stand: the rows it holds are the same."""
        files = self._files(agent.agent_id)
        store.conn.close()
        try:
            compact(
                files,
                store.identity,
                abort=abort,
                on_step=self._on_step,
                bind=agent.connection.bind,
            )
        finally:
            # The rewritten file, or the old one if the rewrite stopped before its rename;
            # a file that no longer opens quarantines the agent.
            store.conn, _ = open_v2(files, after_publish=True)
            agent.connection.bind(store.conn)

    async def _settle_scrubs(self) -> None:
        """On close: a scrub still in its delay is dropped (closing compacts that file
        anyway); one already rewriting is waited for (a native call is never abandoned
        midway)."""
        loop = asyncio.get_running_loop()
        due = [task for task in self._scrubs.values() if task.get_loop() is loop]
        for agent_id, task in list(self._scrubs.items()):
            if agent_id in self._scrubs_waiting:
                task.cancel()
        for task in due:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._scrubs.clear()
