"""`WorkingMemory`'s background rebuilds (R-MAINT-3, reference §8.7): a burst of writes
costs one rebuild after the debounce, a write during a rebuild queues another, a closed
service starts none, and a failing store costs the caller nothing."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_adapters.offload import InlineCalls
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.errors import StoreError
from memory_core.services.read.working import WorkingMemory
from memory_core.settings import MemorySettings

A = "agent-a"


class Counting:
    def __init__(self, store: Any, *, failing: bool = False) -> None:
        self._store = store
        self.calls: Counter[str] = Counter()
        self.failing = failing

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)

        def counted(*args: object, **kwargs: object) -> object:
            self.calls[name] += 1
            if self.failing and name == "store_working_projection":
                raise StoreError("database busy")
            return method(*args, **kwargs)

        return counted


def _world(*, failing: bool = False) -> tuple[WorkingMemory, Counting, InMemoryClaimStore, Any]:
    clock = ManualClock()
    fake = InMemoryClaimStore(clock=clock)
    store = Counting(fake, failing=failing)
    working = WorkingMemory(
        store=store,  # type: ignore[arg-type]
        calls=InlineCalls(),
        domain_clock=clock,
        infra_clock=clock,
        settings=MemorySettings(working_refresh_debounce_seconds=0.05),
        scheduler=AsyncioScheduler(),
    )
    return working, store, fake, clock


def _write(fake: InMemoryClaimStore, clock: ManualClock, text: str) -> None:
    fake.insert(
        ClaimDraft(agent_id=A, kind="semantic", content=text),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    )


def test_a_burst_of_writes_costs_one_rebuild_after_the_debounce() -> None:
    async def go() -> None:
        working, store, fake, clock = _world()
        for index in range(5):
            _write(fake, clock, f"The user owns {index + 1} bicycles.")
            working.schedule(A)
        assert store.calls["store_working_projection"] == 0  # nothing before the debounce
        await working.drain()
        assert store.calls["store_working_projection"] == 1
        snapshot = fake.working_projection(A).snapshot
        assert snapshot is not None and "5 bicycles" in (snapshot.text or "")

        _write(fake, clock, "The user sold a bicycle.")
        working.schedule(A)  # after the first rebuild: a second one
        await working.drain()
        assert store.calls["store_working_projection"] == 2
        snapshot = fake.working_projection(A).snapshot
        assert snapshot is not None and "sold a bicycle" in (snapshot.text or "")

    asyncio.run(go())


def test_a_closed_service_starts_no_rebuild_and_a_failing_store_costs_nothing() -> None:
    async def go() -> None:
        working, store, fake, clock = _world(failing=True)
        _write(fake, clock, "The user likes tea.")
        working.schedule(A)
        await working.drain()  # the StoreError stays inside the background work
        assert store.calls["store_working_projection"] == 1
        working.close()
        working.schedule(A)
        await working.drain()
        assert store.calls["store_working_projection"] == 1

    asyncio.run(go())
