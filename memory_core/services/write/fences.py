"""Execution fences: which background results may still commit (R-WRITE-6, R-WRITE-7).

Three independent guards, as in the reference (§7.2):
- `AgentFences`: a per-agent generation, bumped by destructive operations (clear, delete,
  forget, retirement) and whenever the execution-config fingerprint changes. Generations only
  grow, so a switch A→B→A lands on a new generation and work started under the first A can
  never commit (ABA-safe);
- `SessionEpochs`: a per-session epoch, bumped by invalidation (edit/delete/retry), fork
  seeding, transcript clear, agent reassignment and session destroy;
- `WriteCoordinator`: one lock per agent serialising configuration changes, rebuilds,
  maintenance and commits, so "check the fence, then write" cannot interleave with a change.

Work captures a `WriteTicket` when it is admitted and re-checks it after every await and
before every side effect.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import attrs

from memory_core.domain.errors import FencedError
from memory_core.ports.scheduler import AsyncLock, TaskScheduler

__all__ = [
    "AgentFences",
    "AgentLocks",
    "ExecutionIdentity",
    "SessionEpochs",
    "WriteCoordinator",
    "WriteTicket",
    "execution_fingerprint",
]


def execution_fingerprint(
    *, memory_enabled: bool, embedding: tuple[str, str] | None, extra: Sequence[str] = ()
) -> str:
    """The reference's execution-config fingerprint: JSON of `[memoryEnabled, [provider,
    model] | null]`, plus any further identity (extractor, text model) the caller adds."""
    parts: list[object] = [bool(memory_enabled), None if embedding is None else list(embedding)]
    parts.extend(str(item) for item in extra)
    return json.dumps(parts, separators=(",", ":"), ensure_ascii=False)


@attrs.frozen(kw_only=True)
class ExecutionIdentity:
    """Who may commit: an agent at a generation under one configuration."""

    agent_id: str
    generation: int
    config_fingerprint: str


class AgentFences:
    """Per-agent generations. In memory: a restart starts every agent afresh, and no work
    survives a restart to be fenced."""

    def __init__(self) -> None:
        self._generations: dict[str, int] = {}
        self._fingerprints: dict[str, str] = {}

    def current(self, agent_id: str) -> ExecutionIdentity:
        return ExecutionIdentity(
            agent_id=agent_id,
            generation=self._generations.get(agent_id, 0),
            config_fingerprint=self._fingerprints.get(agent_id, ""),
        )

    def configure(self, agent_id: str, fingerprint: str) -> ExecutionIdentity:
        """Record the agent's execution configuration; a different fingerprint than the
        current one bumps the generation. Re-applying the same one changes nothing."""
        if self._fingerprints.get(agent_id) != fingerprint or agent_id not in self._generations:
            self._fingerprints[agent_id] = fingerprint
            self._bump(agent_id)
        return self.current(agent_id)

    def invalidate(self, agent_id: str) -> ExecutionIdentity:
        """A destructive operation: every identity captured before it is stale."""
        self._bump(agent_id)
        return self.current(agent_id)

    def is_current(self, identity: ExecutionIdentity) -> bool:
        return identity == self.current(identity.agent_id)

    def check(self, identity: ExecutionIdentity) -> None:
        if not self.is_current(identity):
            raise FencedError(f"execution identity of agent {identity.agent_id} is stale")

    def _bump(self, agent_id: str) -> None:
        self._generations[agent_id] = self._generations.get(agent_id, 0) + 1


class SessionEpochs:
    """Per-session epochs. Entries are never dropped: a destroyed session's epoch must not
    fall back to 0, or work captured at 0 before the destroy would look current again."""

    def __init__(self) -> None:
        self._epochs: dict[str, int] = {}

    def current(self, session_id: str) -> int:
        return self._epochs.get(session_id, 0)

    def bump(self, session_id: str) -> int:
        self._epochs[session_id] = self.current(session_id) + 1
        return self._epochs[session_id]

    def is_current(self, session_id: str, epoch: int) -> bool:
        return self.current(session_id) == epoch

    def check(self, session_id: str, epoch: int) -> None:
        if not self.is_current(session_id, epoch):
            raise FencedError(f"session {session_id} moved to a new epoch")


@attrs.frozen(kw_only=True)
class WriteTicket:
    """What a background write captured at admission: its execution identity and the
    session epoch. Valid while both are current."""

    identity: ExecutionIdentity
    session_id: str
    epoch: int


class AgentLocks:
    """One lock per agent, made on first use by the scheduler (no asyncio in the core)."""

    def __init__(self, scheduler: TaskScheduler) -> None:
        self._scheduler = scheduler
        self._locks: dict[str, AsyncLock] = {}
        self._waiting: dict[str, int] = {}  # agent -> holders queued for its lock

    @asynccontextmanager
    async def hold(self, agent_id: str) -> AsyncIterator[None]:
        await self.acquire(agent_id)
        try:
            yield
        finally:
            self.release(agent_id)

    async def acquire(self, agent_id: str) -> None:
        """Take the agent's lock, for a holder whose span is not one block (the embedding
        pipeline keeps an agent's lock from one batch to the next); pair with `release`."""
        lock = self._locks.get(agent_id)
        if lock is None:
            lock = self._locks[agent_id] = self._scheduler.make_lock()
        self._waiting[agent_id] = self._waiting.get(agent_id, 0) + 1
        try:
            await lock.acquire()
        finally:
            left = self._waiting[agent_id] - 1
            if left:
                self._waiting[agent_id] = left
            else:
                del self._waiting[agent_id]

    def release(self, agent_id: str) -> None:
        self._locks[agent_id].release()

    def wanted(self, agent_id: str) -> bool:
        """Someone waits for the agent's lock: a long holder should let go soon."""
        return agent_id in self._waiting

    def forget(self, agent_id: str) -> None:
        """Drop the agent's lock if it is idle (after retirement)."""
        lock = self._locks.get(agent_id)
        if lock is not None and not lock.locked():
            del self._locks[agent_id]


class WriteCoordinator:
    """Serialises one agent's configuration changes, rebuilds, maintenance and commits
    (R-WRITE-7), and owns the fences they consult."""

    def __init__(
        self,
        scheduler: TaskScheduler,
        *,
        fences: AgentFences | None = None,
        epochs: SessionEpochs | None = None,
    ) -> None:
        self._scheduler = scheduler
        self.fences = fences or AgentFences()
        self.epochs = epochs or SessionEpochs()
        self._locks = AgentLocks(scheduler)
        self._released: list[Callable[[str], None]] = []

    def on_released(self, listener: Callable[[str], None]) -> None:
        """Call `listener(agent_id)` each time a holder of `exclusive` lets go: every
        serialised write of the agent has just committed or failed (the stored working
        projection schedules its rebuild from here). A listener must not block or raise."""
        self._released.append(listener)

    @asynccontextmanager
    async def exclusive(self, agent_id: str, *, announce: bool = True) -> AsyncIterator[None]:
        """Hold the agent's lock. Keep holders short and free of provider calls: a config
        change waits behind them. `announce=False`: the release listeners are not called
        now; the holder calls `announce` once its run of writes ends (an ingestion chain,
        whose every chunk commits, would otherwise rebuild the projection per chunk)."""
        try:
            async with self._locks.hold(agent_id):
                yield
        finally:
            if announce:
                self.announce(agent_id)

    def announce(self, agent_id: str) -> None:
        """Tell the release listeners that writes of the agent committed or failed."""
        for listener in self._released:
            listener(agent_id)

    def ticket(self, agent_id: str, session_id: str) -> WriteTicket:
        return WriteTicket(
            identity=self.fences.current(agent_id),
            session_id=session_id,
            epoch=self.epochs.current(session_id),
        )

    def is_valid(self, ticket: WriteTicket) -> bool:
        return self.fences.is_current(ticket.identity) and self.epochs.is_current(
            ticket.session_id, ticket.epoch
        )

    def check(self, ticket: WriteTicket) -> None:
        """FencedError when the configuration, a destructive operation or the session's
        epoch moved on since `ticket` was captured."""
        self.fences.check(ticket.identity)
        self.epochs.check(ticket.session_id, ticket.epoch)

    async def reconfigure(self, agent_id: str, fingerprint: str) -> ExecutionIdentity:
        """Apply a configuration change once in-flight commits of the agent have finished;
        work admitted under the old configuration then fails its next check."""
        async with self.exclusive(agent_id):
            return self.fences.configure(agent_id, fingerprint)

    def invalidate(self, agent_id: str) -> ExecutionIdentity:
        """Fence the agent at once, without waiting for the lock: a destructive operation
        must stop in-flight work at its next check (the operation itself then takes the
        lock to run)."""
        return self.fences.invalidate(agent_id)

    def forget_agent(self, agent_id: str) -> None:
        """Drop the agent's idle lock after retirement (its generation is kept)."""
        self._locks.forget(agent_id)
