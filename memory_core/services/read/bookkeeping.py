"""A session's view anchors and access counts: what a turn records once its contribution is
decided — best effort, and never at the contribution's cost (R-READ-1, R-READ-7).

Both run under their own deadline (`turn_bookkeeping_seconds`), longer than a turn's, in the
background: the turn waits for the anchor only while its own deadline lasts and then returns
without its id, the anchor still being written. The access count starts after the anchor and
is never waited for: on a local store it may wait out a busy timeout behind another
process's write lock. Failures are logged by type only (a message may quote content).

Access counts are coalesced: the turns of one session within `ACCESS_COALESCE_SECONDS` are
counted by one write. Each count was a write transaction of its own — on SQLite an fsync
(synchronous=FULL), 2-6 ms on the loop thread, paid by whatever ran next: in a host that
prepares turns back to back, the next turn. Every selection is still counted exactly once
(an id selected in k turns of the window gets k), and `drain` writes what is pending at
once; `last_accessed` becomes the window's latest turn time, at most that much later.
"""

from __future__ import annotations

import logging
from collections import Counter
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

__all__ = ["ACCESS_COALESCE_SECONDS", "TurnBookkeeping"]

log = logging.getLogger(__name__)

# Short next to the time between a person's turns, long next to a turn prepared back to back.
ACCESS_COALESCE_SECONDS = 0.5


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
        # Selections not yet written: times selected per id, and the latest turn's time.
        self._access: Counter[str] = Counter()
        self._access_now: datetime | None = None
        self._flush: TaskHandle | None = None  # sleeping out the window, then writing
        self._flushing = False  # the flush has taken the counts: it must not be cancelled

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
        if self._gets_anchor(manifest):  # else there is nothing to wait for
            handle = self._scheduler.spawn(anchor, name=f"memory-anchor:{self._agent_id}")
            self._pending.append(handle)
            try:
                await self._scheduler.run_within(handle.wait, deadline.remaining())
            except DeadlineExceeded:
                log.warning("view anchor late for agent %s; written after the turn", self._agent_id)
        if selected:
            self._access.update(selected)
            self._access_now = now if self._access_now is None else max(now, self._access_now)
            if self._flush is None or self._flush.done:
                self._flush = self._scheduler.spawn(
                    self._flush_later, name=f"memory-access:{self._agent_id}"
                )
                self._pending.append(self._flush)
        return ids[0] if ids else None

    async def drain(self) -> None:
        """Until every record still being written has settled (each under its deadline);
        access counts still inside their window are written now."""
        flush = self._flush
        if flush is not None and not flush.done and not self._flushing:
            flush.cancel()  # still sleeping: the counts it would write are written below
            await flush.wait()
        await self._write_access()
        for handle in self._pending:
            await handle.wait()
        self._pending.clear()

    async def _flush_later(self) -> None:
        assert self._scheduler is not None  # only spawned through it
        await self._scheduler.sleep(ACCESS_COALESCE_SECONDS)
        self._flushing = True
        try:
            await self._write_access()
        finally:
            self._flushing = False

    async def _write_access(self) -> None:
        """Write every pending selection: one store call per multiplicity level (an id
        selected twice is in the first two), all in one blocking hop."""
        counts, now = self._access, self._access_now
        self._access, self._access_now = Counter(), None
        if not counts or now is None:
            return
        levels: list[list[str]] = []
        while counts:
            levels.append(list(counts))
            counts = Counter({cid: n - 1 for cid, n in counts.items() if n > 1})
        own = Deadline.after(self._infra, self._seconds)

        def write() -> None:
            for ids in levels:
                self._store.record_access(self._agent_id, ids, now=now)

        try:
            await self._calls.run(write, deadline=own, cancel=CancellationToken())
        except Exception as exc:  # the count is best effort
            log.warning(
                "access accounting skipped for agent %s: %s", self._agent_id, type(exc).__name__
            )

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

    def _gets_anchor(self, manifest: SelectionManifest) -> bool:
        """Whether this turn gets a view anchor: there is a tape and something was shown."""
        return self._anchors is not None and not manifest.is_empty

    async def _append_anchor(
        self,
        message_id: str,
        manifest: SelectionManifest,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> str | None:
        if not self._gets_anchor(manifest):
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
