"""MaintenanceService: the timers, cooldowns, budgets and lifecycle of background
maintenance (R-MAINT-2, reference §8.3).

- `start()` arms: after `maintenance_arming_seconds` the agents with dirty work (up to
  eight, oldest work first) get their startup pass, staggered; `notify_write(agent)`
  (re)starts that agent's debounce timer, so a pass runs once writes go quiet.
- A pass is heavy when a text provider is configured, the heavy cooldown since the last
  completed heavy pass has passed and no failure cooldown holds; otherwise cheap. Asking
  for a heavy pass without a model runs the cheap one and records `skipped missing-model`.
- At most `maintenance_concurrency` agents run a pass at once; one pass per agent.
- `stop()` is synchronous: timers are cancelled, new passes refused, the epoch advanced
  and every in-flight pass's token and task cancelled, so a pass stalled in a provider call
  ends at once, whatever the provider does with its token. `drain(timeout)` then waits for
  those tasks to settle and raises `MaintenanceDrainTimeout` rather than let the host close
  storage under one. `start()` after `stop()` re-arms; a startup pass not yet run is armed
  again, never lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from memory_core.domain.cancellation import Deadline
from memory_core.domain.errors import AgentMemoryError, DeadlineExceeded, FencedError
from memory_core.domain.scope import validate_agent_id
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import AsyncLock, TaskHandle, TaskScheduler
from memory_core.services.maintenance.challenges import ChallengeStep
from memory_core.services.maintenance.fence import MaintenanceStore, PassFence
from memory_core.services.maintenance.merge import MergeStep
from memory_core.services.maintenance.passes import (
    HEAVY_EVENT,
    PassMode,
    PassReport,
    PassRunner,
    within,
)
from memory_core.services.maintenance.persona import PersonaStep
from memory_core.services.maintenance.reflection import ReflectionStep
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.fences import WriteCoordinator
from memory_core.settings import MemorySettings

__all__ = ["MaintenanceDrainTimeout", "MaintenanceService", "MaintenanceStatus"]

# §8.3: startup passes go to the most recently active agents only.
_STARTUP_AGENTS = 8


class MaintenanceDrainTimeout(AgentMemoryError):
    """Passes were still running when the drain's time ran out: storage must stay open."""


@attrs.frozen(kw_only=True)
class MaintenanceStatus:
    running: bool  # started and not stopped
    in_flight: tuple[str, ...]  # agents with a pass running now
    armed: tuple[str, ...]  # agents with a timer waiting
    startup_pending: bool  # the startup pass has not run yet


@attrs.define
class _Pass:
    fence: PassFence
    handle: TaskHandle | None = None
    report: PassReport | None = None
    error: BaseException | None = None


class MaintenanceService:
    def __init__(
        self,
        *,
        store: MaintenanceStore,
        index: VectorIndex,
        gateway: ProviderGateway,
        coordinator: WriteCoordinator,
        scheduler: TaskScheduler,
        domain_clock: DomainClock,
        infra_clock: InfraClock,
        settings: MemorySettings,
        on_pass_ended: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        # Archive and reflection writes change what working memory shows without taking
        # the agent's write lock; the listener (the stored projection's rebuild) hears
        # every ended pass instead (R-MAINT-3).
        self._on_pass_ended = on_pass_ended
        self._scheduler = scheduler
        self._clock = domain_clock
        self._infra = infra_clock
        self._settings = settings
        self._merge = MergeStep(
            store=store,
            index=index,
            gateway=gateway,
            coordinator=coordinator,
            settings=settings,
            now=domain_clock.now,
        )
        challenges = ChallengeStep(
            store=store,
            gateway=gateway,
            settings=settings,
            now=domain_clock.now,
            on_resolved=self.notify_write,
        )
        self._runner = PassRunner(
            store=store,
            index=index,
            merge=self._merge,
            challenges=challenges,
            reflection=ReflectionStep(
                store=store, gateway=gateway, settings=settings, now=domain_clock.now
            ),
            persona=PersonaStep(
                store=store, gateway=gateway, settings=settings, now=domain_clock.now
            ),
            settings=settings,
            now=domain_clock.now,
        )
        self._epoch = 0
        self._running = False
        self._stopped = False  # from stop() until the next start(): passes are refused
        # Agents the startup pass still owes a pass; None until it has listed them.
        self._startup_owed: set[str] | None = None
        self._timers: dict[str, TaskHandle] = {}
        self._passes: dict[str, _Pass] = {}
        self._slots: list[AsyncLock] = []

    # --- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Arm the timers (idempotent while running)."""
        if self._running:
            return
        self._running = True
        self._stopped = False
        if self._startup_owed is None:
            self._arm("*startup", self._settings.maintenance_arming_seconds, self._startup)
            return
        # Stopped before the startup passes ran: they are armed again, not lost.
        for i, agent_id in enumerate(sorted(self._startup_owed)):
            self._arm(agent_id, self._startup_delay(i), self._timed)

    def stop(self) -> None:
        """Synchronous: no timer fires, no pass starts, every pass in flight is fenced and
        its provider calls aborted; `drain` waits for them to settle."""
        self._running = False
        self._stopped = True
        self._epoch += 1
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for running in self._passes.values():
            running.fence.token.cancel("maintenance stopped")
            if running.handle is not None:
                running.handle.cancel()

    async def drain(self, timeout: float | None = None) -> None:
        """Wait until no pass is in flight; MaintenanceDrainTimeout after `timeout`
        seconds (`maintenance_drain_seconds` by default)."""
        seconds = self._settings.maintenance_drain_seconds if timeout is None else timeout

        async def settled() -> None:
            # Waiting on each handle in turn cost every pass a scheduler round trip or two
            # even once it had ended; on a loop busy with other work a round takes long,
            # and a drain of several passes ran past its timeout after they had all
            # settled. Ended passes are collected at once; only an unfinished one is
            # awaited, so a drain costs the rounds the slowest pass needs, not one per pass.
            while self._passes:
                unfinished = None
                for agent_id, running in list(self._passes.items()):
                    if running.handle is None:
                        continue
                    if running.handle.done:
                        self._settle(agent_id, running)
                    elif unfinished is None:
                        unfinished = running.handle
                if unfinished is not None:
                    await unfinished.wait()
                elif self._passes:
                    await self._scheduler.yield_now()  # a pass about to be spawned

        try:
            await self._scheduler.run_within(settled, seconds)
        except DeadlineExceeded:
            raise MaintenanceDrainTimeout(
                f"{len(self._passes)} maintenance pass(es) still running after {seconds} s"
            ) from None

    def status(self) -> MaintenanceStatus:
        return MaintenanceStatus(
            running=self._running,
            in_flight=tuple(sorted(self._passes)),
            armed=tuple(sorted(a for a in self._timers if not a.startswith("*"))),
            startup_pending=self._startup_owed is None or bool(self._startup_owed),
        )

    def notify_write(self, agent_id: str) -> None:
        """An agent's claims changed: (re)start its debounce timer."""
        if self._running:
            self._arm(agent_id, self._settings.maintenance_debounce_seconds, self._timed)

    # --- passes --------------------------------------------------------------------------
    async def run_pass(
        self,
        agent_id: str,
        *,
        heavy: bool | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> PassReport:
        """One pass now: heavy when asked (`True`), cheap when `False`, else by cooldown.
        Runs without `start()` (a CLI's pass on demand); FencedError between `stop()` and
        the next `start()`, and while the agent already has a pass running."""
        validate_agent_id(agent_id)
        if self._stopped:
            raise FencedError("maintenance is stopped; start() resumes it")
        if agent_id in self._passes:
            raise FencedError("a maintenance pass is already running for this agent")
        mode, skipped = self._mode(agent_id, heavy)
        running = _Pass(fence=PassFence(epoch=self._epoch, current=lambda: self._epoch))
        self._passes[agent_id] = running

        async def work() -> None:
            try:
                async with self._slot():
                    running.fence.check()
                    deadline = Deadline.after(self._infra, self._settings.maintenance_pass_seconds)
                    running.report = await self._runner.run(
                        agent_id,
                        mode=mode,
                        skipped=skipped,
                        fence=running.fence,
                        deadline=deadline,
                        progress=progress,
                    )
            except BaseException as exc:
                running.error = exc
                raise
            finally:
                self._settle(agent_id, running)
                if self._on_pass_ended is not None:
                    self._on_pass_ended(agent_id)

        running.handle = self._scheduler.spawn(work, name=f"memory-maintenance:{agent_id}")
        await running.handle.wait()
        self._settle(agent_id, running)  # cancelled before its first step: no finally ran
        if running.report is not None:
            return running.report
        if running.error is not None and not running.fence.valid:
            return PassReport(agent_id=agent_id, mode=mode, skipped=skipped, stopped=True)
        if isinstance(running.error, Exception):
            raise running.error
        return PassReport(agent_id=agent_id, mode=mode, skipped=skipped, stopped=True)

    def _settle(self, agent_id: str, running: _Pass) -> None:
        if self._passes.get(agent_id) is running:
            del self._passes[agent_id]

    def _mode(self, agent_id: str, heavy: bool | None) -> tuple[PassMode, str | None]:
        if heavy is False:
            return PassMode.CHEAP, None
        if not self._merge.gateway_has_model:
            return PassMode.CHEAP, "missing-model"
        if heavy:
            return PassMode.HEAVY, None
        now = self._clock.now()
        completed = self._store.last_event_at(agent_id, HEAVY_EVENT, status="completed")
        failed = self._store.last_event_at(agent_id, HEAVY_EVENT, status="failed")
        if within(completed, now, self._settings.maintenance_heavy_cooldown_seconds) or within(
            failed, now, self._settings.maintenance_failure_cooldown_seconds
        ):
            return PassMode.CHEAP, "cooldown"
        return PassMode.HEAVY, None

    def _slot(self) -> _Slot:
        if not self._slots:
            self._slots = [
                self._scheduler.make_lock() for _ in range(self._settings.maintenance_concurrency)
            ]
        return _Slot(self._slots)

    # --- timers --------------------------------------------------------------------------
    def _arm(self, key: str, delay: float, fire: Callable[[str], object]) -> None:
        previous = self._timers.pop(key, None)
        if previous is not None:
            previous.cancel()
        epoch = self._epoch

        async def timer() -> None:
            await self._scheduler.sleep(delay)
            if epoch != self._epoch or self._timers.get(key) is not handle:
                return
            del self._timers[key]
            await fire(key)  # type: ignore[misc]

        handle = self._scheduler.spawn(timer, name=f"memory-maintenance-timer:{key}")
        self._timers[key] = handle

    async def _startup(self, _: str) -> None:
        agents: Sequence[str] = self._store.dirty_agents(limit=_STARTUP_AGENTS)
        self._startup_owed = set(agents)
        for i, agent_id in enumerate(agents):
            self._arm(agent_id, self._startup_delay(i), self._timed)

    def _startup_delay(self, i: int) -> float:
        settings = self._settings
        return settings.maintenance_startup_delay_seconds + i * settings.maintenance_stagger_seconds

    async def _timed(self, agent_id: str) -> None:
        if not self._running or agent_id in self._passes:
            return
        try:
            report = await self.run_pass(agent_id)
        except AgentMemoryError:
            # A fenced or failed pass leaves its seeds dirty; the next write or start retries.
            return
        if not report.stopped and self._startup_owed is not None:
            self._startup_owed.discard(agent_id)


@attrs.define
class _Slot:
    """One of the concurrency slots: the first free lock, else wait for the least busy."""

    locks: list[AsyncLock]
    held: AsyncLock | None = None

    async def __aenter__(self) -> None:
        free = next((lock for lock in self.locks if not lock.locked()), None)
        self.held = free if free is not None else self.locks[id(self) % len(self.locks)]
        await self.held.acquire()

    async def __aexit__(self, *_: object) -> None:
        assert self.held is not None
        self.held.release()
