"""Per-agent state for one store object: locks, open namespaces, generations, quarantine.

`Agents` opens an agent's namespace on first use (the decision tree in `opener`), runs every
native call through the guard with the agent's connection as the thing to interrupt, keeps
at most `max_open` namespaces open (least recently used idle ones close first; the cap is
soft when all are busy), and quarantines an agent whose call hung or failed fatally: the
marker is persisted and the agent stays closed for the life of this object, which the
composition root holds per process. Every open, close, rebuild, drop and quarantine moves
the agent's generation on, so certificates of an earlier generation lapse — except that an
eviction parks the agent's certificate: reopening the agent in this object restores it
(`resume`), since every change to the file meanwhile went through this object too.

Forgetting reaches the file's bytes promptly: a delete schedules a scrub (`scrub`), and a
close with deletes since the last rewrite compacts the file (R-PRIV-3). A clean close
leaves the matrix's snapshot beside the file for the next warm-up (`snapshot`). What an
agent keeps across opens is `agent.Agent`.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import (
    DeadlineExceeded,
    IdentityMismatch,
    StoreError,
    StoreQuarantined,
)
from memory_core.ports.clock import InfraClock
from memory_core.ports.vectors import ReadyCertificate, VectorHealth, VectorStoreCold

from . import snapshot
from .agent import Agent
from .agent_store import AgentStore
from .files import StoreFiles, file_stem, fsync_directory, remove_quietly
from .guard import AbortFlag, NativeGuard
from .opener import Opened, create_in_memory, open_files, republish
from .publish import StepHook, compact
from .scrub import ScrubMethods

__all__ = ["Agents"]

_log = logging.getLogger(__name__)

T = TypeVar("T")


class Agents(ScrubMethods):
    """The agents of one store object, on `root` (None: private in-memory databases)."""

    def __init__(
        self,
        root: Path | None,
        clock: InfraClock,
        *,
        max_open: int,
        grace_seconds: float,
        housekeeping_seconds: float,
        migration_page_rows: int,
        on_step: StepHook | None,
        scrub_delay_seconds: float,
    ) -> None:
        if max_open < 1:
            raise ValueError("max_open must be >= 1")
        if scrub_delay_seconds < 0:
            raise ValueError("scrub_delay_seconds must be >= 0")
        self.root = root
        self._clock = clock
        # An in-memory namespace lives only while open: never evict one.
        self._max_open = max_open if root is not None else None
        # One worker per namespace that may be open (calls of one agent run one at a time);
        # as many spares for calls that hang, so threads stay bounded at twice that.
        self.guard = NativeGuard(grace_seconds=grace_seconds, workers=max_open, spare=max_open)
        self._housekeeping = housekeeping_seconds
        self._page_rows = migration_page_rows
        self._on_step: StepHook = on_step or (lambda step: None)
        self._agents: dict[str, Agent] = {}
        self._open: OrderedDict[str, None] = OrderedDict()  # least recently used first
        self._init_scrubs(scrub_delay_seconds)
        self.closed = False

    def get(self, agent_id: str, *, allow_quarantined: bool = False) -> Agent:
        """The agent's state; StoreError once closed, StoreQuarantined if quarantined."""
        if self.closed:
            raise StoreError("vector store is closed")
        file_stem(agent_id)  # validates the id
        agent = self._agents.get(agent_id)
        if agent is None:
            agent = self._agents[agent_id] = Agent(agent_id)
        if agent.quarantined and not allow_quarantined:
            raise StoreQuarantined(f"vector store of agent {agent_id!r} is quarantined")
        return agent

    def health(self, agent_id: str) -> VectorHealth:
        if self.closed:
            return VectorHealth.STOPPED
        agent = self._agents.get(agent_id)
        if agent is None:
            return VectorHealth.AVAILABLE
        if agent.quarantined:
            return VectorHealth.QUARANTINED
        return VectorHealth.SUSPECT if agent.suspect else VectorHealth.AVAILABLE

    def touch(self, agent: Agent) -> None:
        if agent.agent_id in self._open:
            self._open.move_to_end(agent.agent_id)

    async def run(
        self,
        agent: Agent,
        work: Callable[[AbortFlag], T],
        *,
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> T:
        """`work` under the guard; quarantine on a hang or fatal failure. Call under the lock."""
        try:
            result = await self.guard.run(
                work,
                what=what,
                deadline=deadline,
                cancel=cancel,
                interrupt=agent.connection.interrupt,
            )
        except StoreQuarantined as exc:
            self._quarantine(agent, str(exc))
            raise
        except DeadlineExceeded:
            agent.suspect = True
            raise
        agent.suspect = False
        return result

    async def require(
        self,
        agent: Agent,
        identity: EmbeddingIdentity,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> AgentStore:
        """The open namespace for `identity`, created if there is none. Call under the lock."""
        store = await self._open_store(agent, identity, deadline, cancel)
        assert store is not None  # with an identity, opening creates
        if store.identity != identity:
            raise IdentityMismatch(
                f"vector store of agent {agent.agent_id!r} holds {_describe(store.identity)}, "
                f"not {_describe(identity)}; rebuild it to change identity"
            )
        return store

    async def find(
        self, agent: Agent, deadline: Deadline, cancel: CancellationToken
    ) -> AgentStore | None:
        """The open namespace, or None where there is none (nothing is created)."""
        return await self._open_store(agent, None, deadline, cancel)

    async def resume(
        self,
        agent: Agent,
        certificate: ReadyCertificate,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> AgentStore:
        """Reopen an evicted agent and reload its matrix under the parked certificate, so
        an agent pushed out of the open-store cap is not cold for good. No coverage check is
        needed: while it was closed every upsert and delete went through this object into
        the file the matrix is read from. VectorStoreCold when nothing is parked for it.
        Call under the lock."""
        store = agent.store
        if store is not None and store.matrix is not None and store.certificate == certificate:
            return store  # another query resumed it while this one waited for the lock
        if agent.parked is None or agent.parked != certificate:
            raise VectorStoreCold(
                f"vector store of agent {agent.agent_id!r} has no ready certificate"
            )
        store = await self.find(agent, deadline, cancel)
        if store is None or store.identity != certificate.identity:
            agent.parked = None
            raise VectorStoreCold(f"vector store of agent {agent.agent_id!r} is gone")
        if store.matrix is None:
            # Unusable rows were deleted by the warm-up that earned the certificate and
            # upserts validate theirs, so the second list is empty; it is not needed here.
            store.matrix, _ = await self.run(
                agent, store.read_matrix, what="resume", deadline=deadline, cancel=cancel
            )
        store.certificate, agent.parked = certificate, None
        return store

    async def rebuild(
        self,
        agent: Agent,
        identity: EmbeddingIdentity,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        """Replace the namespace with a fresh empty one for `identity`. Call under the lock."""
        await self._close(agent, deadline, cancel, scrub=False)  # the file is replaced anyway
        if self.root is None:
            opened = create_in_memory(identity)
        else:
            files = self._files(agent.agent_id)
            opened = await self.run(
                agent,
                lambda abort: republish(
                    files, identity, abort=abort, on_step=self._on_step, bind=agent.connection.bind
                ),
                what="rebuild",
                deadline=deadline,
                cancel=cancel,
            )
        self._adopt(agent, opened)

    async def drop(self, agent: Agent, deadline: Deadline, cancel: CancellationToken) -> None:
        """Close and delete every file of the agent, the marker too. Call under the lock."""
        if agent.quarantined:
            agent.store = None  # a hung worker may still hold it: never touch it again
            agent.parked = None
            self._open.pop(agent.agent_id, None)
        else:
            await self._close(agent, deadline, cancel, scrub=False)  # the files go anyway
        agent.next_generation()
        if self.root is not None:
            files = self._files(agent.agent_id)
            await self.run(
                agent,
                lambda abort: _remove_all(files),
                what="drop",
                deadline=deadline,
                cancel=cancel,
            )

    async def close_all(self) -> None:
        """Close every open namespace; later calls raise StoreError."""
        if self.closed:
            return
        self.closed = True
        await self._settle_scrubs()
        for agent in list(self._agents.values()):
            if agent.quarantined or agent.store is None:
                continue
            async with agent.lock:
                await self._close_quietly(agent)
        self.guard.close()

    # --- internals --------------------------------------------------------------------

    def _files(self, agent_id: str) -> StoreFiles:
        assert self.root is not None
        return StoreFiles(root=self.root, agent_id=agent_id)

    async def _open_store(
        self,
        agent: Agent,
        identity: EmbeddingIdentity | None,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> AgentStore | None:
        if agent.store is not None:
            self.touch(agent)
            return agent.store
        if self.root is None:
            return None if identity is None else self._adopt(agent, create_in_memory(identity))
        await self._evict(agent)
        files = self._files(agent.agent_id)
        opened = await self.run(
            agent,
            lambda abort: open_files(
                files,
                identity,
                page_size=self._page_rows,
                abort=abort,
                on_step=self._on_step,
                bind=agent.connection.bind,
            ),
            what="open",
            deadline=deadline,
            cancel=cancel,
        )
        return None if opened is None else self._adopt(agent, opened)

    def _adopt(self, agent: Agent, opened: Opened) -> AgentStore:
        conn, identity = opened
        files = None if self.root is None else self._files(agent.agent_id)
        agent.store = AgentStore(conn, identity, agent.next_generation(), files=files)
        agent.connection.bind(conn)
        self._open[agent.agent_id] = None
        self._open.move_to_end(agent.agent_id)
        return agent.store

    async def _close(
        self,
        agent: Agent,
        deadline: Deadline,
        cancel: CancellationToken,
        *,
        park: bool = False,
        scrub: bool = True,
    ) -> None:
        store, agent.store = agent.store, None
        self._open.pop(agent.agent_id, None)
        agent.next_generation()
        if not park:
            agent.parked = None
        if store is not None:
            if park and store.certificate is not None:
                agent.parked = store.certificate
            store.certificate = None
            await self.run(
                agent,
                lambda abort: self._close_store(agent, store, abort, scrub=scrub),
                what="close",
                deadline=deadline,
                cancel=cancel,
            )
        agent.connection.bind(None)

    def _close_store(
        self, agent: Agent, store: AgentStore, abort: AbortFlag, *, scrub: bool
    ) -> None:
        """Close the connection; a file with deletes since its last rewrite is compacted
        now, one rewrite per close however many deletes came before (R-PRIV-3). Then the
        resident matrix is left as the file's snapshot, unless an unchanged one is there."""
        matrix = store.matrix
        store.close()
        if self.root is None or not scrub:
            return
        files = self._files(agent.agent_id)
        if files.scrub.exists():
            compact(
                files,
                store.identity,
                abort=abort,
                on_step=self._on_step,
                bind=agent.connection.bind,
            )
        # An empty namespace reads as fast from DuckDB; an unchanged snapshot still holds.
        if matrix is None or not len(matrix) or files.snapshot.exists():
            return
        ids, rows = matrix.contents()
        try:
            snapshot.write(files, store.identity, ids, rows, abort)
        except OSError as exc:
            # Only the next warm-up's speed depends on it: it reads DuckDB instead.
            _log.warning("vector snapshot for agent=%s not written: %s", agent.agent_id, exc)

    async def _close_quietly(self, agent: Agent, *, park: bool = False) -> None:
        deadline = Deadline.after(self._clock, self._housekeeping)
        try:
            await self._close(agent, deadline, CancellationToken(), park=park)
        except StoreError as exc:
            _log.warning("closing vector store agent=%s failed: %s", agent.agent_id, exc)

    async def _evict(self, opening: Agent) -> None:
        if self._max_open is None:
            return
        for agent_id in list(self._open):
            if len(self._open) < self._max_open:
                return
            agent = self._agents[agent_id]
            if agent is opening or agent.lock.locked():
                continue  # busy: the cap is soft
            async with agent.lock:
                await self._close_quietly(agent, park=True)

    def _quarantine(self, agent: Agent, reason: str) -> None:
        agent.quarantined = True
        agent.parked = None
        agent.store = None  # a hung worker may still hold the connection: leave it be
        self._open.pop(agent.agent_id, None)
        agent.next_generation()
        if self.root is not None:
            try:
                self._files(agent.agent_id).write_marker(reason)
            except OSError as exc:
                _log.error("quarantine marker for agent=%s not written: %s", agent.agent_id, exc)
        _log.error("vector store quarantined agent=%s", agent.agent_id)


def _describe(identity: EmbeddingIdentity) -> str:
    return f"{identity.provider}/{identity.model} dim {identity.dim}"


def _remove_all(files: StoreFiles) -> None:
    remove_quietly(*files.store_files(), files.marker)
    fsync_directory(files.root)
