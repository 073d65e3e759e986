"""A session's view anchors and access counts: what a turn records once its contribution is
decided — best effort, and never at the contribution's cost (R-READ-1, R-READ-7).

Both run under their own deadline (`turn_bookkeeping_seconds`), longer than a turn's, in the
background: the turn waits for the anchor only while its own deadline lasts and then returns
without its id, the anchor still being written. The access count starts after the anchor and
is never waited for: on a local store it may wait out a busy timeout behind another
process's write lock. Failures are logged by type only (a message may quote content).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded
from memory_core.domain.manifest import SelectionManifest
from memory_core.ports.blocking import BlockingCalls
from memory_core.ports.claims import ClaimSearch
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.ports.tape import Anchor, AnchorKind, TapeAnchorWriter

__all__ = ["TurnBookkeeping"]

log = logging.getLogger(__name__)


class TurnBookkeeping:
    """Records of one session's turns; without a scheduler they are written inline."""

    def __init__(
        self,
        *,
        agent_id: str,
        session_id: str,
        store: ClaimSearch,
        anchors: TapeAnchorWriter | None,
        calls: BlockingCalls,
        domain_clock: DomainClock,
        infra_clock: InfraClock,
        scheduler: TaskScheduler | None,
        seconds: float,
    ) -> None:
        self._agent_id = agent_id
        self._session_id = session_id
        self._store = store
        self._anchors = anchors
        self._calls = calls
        self._clock = domain_clock
        self._infra = infra_clock
        self._scheduler = scheduler
        self._seconds = seconds
        self._pending: list[TaskHandle] = []

    async def record(
        self,
        message_id: str,
        manifest: SelectionManifest,
        *,
        deadline: Deadline,
        written: Callable[[str], None],
    ) -> str | None:
        """Append the turn's view anchor and count its selected ids; the anchor id if it
        was written before `deadline`. `written` gets the id whenever it is written."""
        own = Deadline.after(self._infra, self._seconds)
        cancel = CancellationToken()
        ids: list[str] = []
        selected = [item.id for item in manifest.selected]
        now = self._clock.now()

        async def anchor() -> None:
            anchor_id = await self._append_anchor(message_id, manifest, own, cancel)
            if anchor_id is not None:
                ids.append(anchor_id)
                written(anchor_id)

        async def access() -> None:
            await self._count(selected, now, own, cancel)

        if self._scheduler is None:
            await anchor()
            await access()
            return ids[0] if ids else None
        self._pending = [handle for handle in self._pending if not handle.done]
        handle = self._scheduler.spawn(anchor, name=f"memory-anchor:{self._agent_id}")
        self._pending.append(handle)
        try:
            await self._scheduler.run_within(handle.wait, deadline.remaining())
        except DeadlineExceeded:
            log.warning("view anchor late for agent %s; written after the turn", self._agent_id)
        if selected:
            self._pending.append(
                self._scheduler.spawn(access, name=f"memory-access:{self._agent_id}")
            )
        return ids[0] if ids else None

    async def drain(self) -> None:
        """Until every record still being written has settled (each under its deadline)."""
        for handle in self._pending:
            await handle.wait()
        self._pending.clear()

    async def _count(
        self, selected: Sequence[str], now: datetime, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        if not selected:
            return
        # Only ids that entered the prompt are counted (R-READ-7), once per message.
        try:
            await self._calls.run(
                lambda: self._store.record_access(self._agent_id, selected, now=now),
                deadline=deadline,
                cancel=cancel,
            )
        except Exception as exc:  # the count is best effort
            log.warning(
                "access accounting skipped for agent %s: %s", self._agent_id, type(exc).__name__
            )

    async def _append_anchor(
        self,
        message_id: str,
        manifest: SelectionManifest,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> str | None:
        if self._anchors is None or manifest.is_empty:
            return None
        try:
            return await self._anchors.append(
                Anchor(
                    kind=AnchorKind.VIEW_ASSEMBLED,
                    agent_id=self._agent_id,
                    session_id=self._session_id,
                    message_id=message_id,
                    payload={"manifest": manifest.to_json()},
                ),
                deadline=deadline,
                cancel=cancel,
            )
        except Exception as exc:  # a host tape may raise anything (ENOSPC)
            log.warning(
                "view anchor not written for agent %s: %s", self._agent_id, type(exc).__name__
            )
            return None
