"""MaintenanceService timers on the in-memory fakes (R-MAINT-2): a startup pass stopped
before it ran is armed again by the next start, never lost; writes coalesce into one
debounced pass; stop refuses new passes until start."""

from __future__ import annotations

import asyncio

import attrs
import pytest

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, ClaimKind, WriteOrigin
from memory_core.domain.errors import FencedError
from memory_core.services.maintenance import MaintenanceService
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.fences import WriteCoordinator
from memory_core.settings import MemorySettings

A = "agent-a"
FAST = MemorySettings(
    maintenance_arming_seconds=0.01,
    maintenance_startup_delay_seconds=0.01,
    maintenance_stagger_seconds=0.0,
    maintenance_debounce_seconds=0.05,
)


def _service(
    store: InMemoryClaimStore, clock: ManualClock, settings: MemorySettings = FAST
) -> MaintenanceService:
    scheduler = AsyncioScheduler()
    return MaintenanceService(
        store=store,
        index=VectorIndex(store=store, vectors=None, gateway=None, domain_clock=clock),
        gateway=ProviderGateway(clock=clock, settings=settings),
        coordinator=WriteCoordinator(scheduler),
        scheduler=scheduler,
        domain_clock=clock,
        infra_clock=clock,
        settings=settings,
    )


def _passes(store: InMemoryClaimStore) -> int:
    return sum(e.event == "memory/maintenance" for e in store.list_audit(A, limit=100))


async def _until(condition: object, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached in time")


@pytest.fixture
def store() -> InMemoryClaimStore:
    store = InMemoryClaimStore()
    draft = ClaimDraft(agent_id=A, kind=ClaimKind.SEMANTIC, content="likes tea")
    store.insert(draft, origin=WriteOrigin.EXTRACTION, now=ManualClock().now())
    return store


def test_a_startup_pass_stopped_before_it_ran_is_armed_again(store: InMemoryClaimStore) -> None:
    clock = ManualClock()

    async def go() -> None:
        service = _service(store, clock)
        service.start()
        service.stop()  # before the arming delay passed
        await service.drain()
        await asyncio.sleep(0.1)
        assert _passes(store) == 0 and service.status().startup_pending
        with pytest.raises(FencedError):
            await service.run_pass(A)
        service.start()
        await _until(lambda: _passes(store) == 1)
        await _until(lambda: not service.status().startup_pending)
        service.stop()
        await service.drain()

    asyncio.run(go())


def test_writes_coalesce_into_one_debounced_pass(store: InMemoryClaimStore) -> None:
    clock = ManualClock()

    async def go() -> None:
        # The startup pass is an hour away: only the writes' debounce can run a pass.
        quiet_start = attrs.evolve(FAST, maintenance_arming_seconds=3_600.0)
        service = _service(store, clock, quiet_start)
        service.start()
        for _ in range(5):
            service.notify_write(A)
            await asyncio.sleep(0.005)
        assert service.status().armed == (A,)
        await _until(lambda: _passes(store) == 1)
        await asyncio.sleep(0.1)
        assert _passes(store) == 1 and service.status().armed == ()
        service.stop()
        await service.drain()

    asyncio.run(go())
