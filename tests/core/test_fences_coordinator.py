"""The per-agent write coordinator and the asyncio scheduler behind it (R-WRITE-7)."""

from __future__ import annotations

import asyncio

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_core.ports.scheduler import AsyncLock, TaskHandle, TaskScheduler
from memory_core.services.write.fences import WriteCoordinator


def test_asyncio_scheduler_satisfies_the_port() -> None:
    """R-WRITE-1: the core schedules through the TaskScheduler port only."""
    scheduler = AsyncioScheduler()
    assert isinstance(scheduler, TaskScheduler)
    assert isinstance(scheduler.make_lock(), AsyncLock)


def test_spawn_returns_before_the_work_runs_and_wait_does_not_raise() -> None:
    """R-WRITE-1: spawned work starts later; its failure is the work's to report."""

    async def scenario() -> None:
        scheduler = AsyncioScheduler()
        started: list[str] = []

        async def work() -> None:
            started.append("ran")
            raise RuntimeError("boom")

        handle = scheduler.spawn(work, name="test")
        assert isinstance(handle, TaskHandle)
        assert started == [] and not handle.done
        await handle.wait()
        assert started == ["ran"] and handle.done
        assert scheduler.pending == 0

    asyncio.run(scenario())


def test_cancelled_task_settles() -> None:
    """R-WRITE-6: a cancelled background task still settles (its owner records the outcome)."""

    async def scenario() -> None:
        scheduler = AsyncioScheduler()
        gate = asyncio.Event()

        async def work() -> None:
            await gate.wait()

        handle = scheduler.spawn(work, name="test")
        await asyncio.sleep(0)
        handle.cancel()
        await handle.wait()
        assert handle.done

    asyncio.run(scenario())


def test_reconfigure_waits_for_a_commit_holding_the_agent_lock() -> None:
    """R-WRITE-7: a configuration change cannot interleave with a commit of the same agent."""

    async def scenario() -> None:
        coordinator = WriteCoordinator(AsyncioScheduler())
        coordinator.fences.configure("agent-1", "A")
        ticket = coordinator.ticket("agent-1", "s1")
        release = asyncio.Event()
        order: list[str] = []

        async def commit() -> None:
            async with coordinator.exclusive("agent-1"):
                coordinator.check(ticket)
                order.append("commit-checked")
                await release.wait()
                order.append("commit-done")

        committing = asyncio.create_task(commit())
        await asyncio.sleep(0)
        reconfiguring = asyncio.create_task(coordinator.reconfigure("agent-1", "B"))
        await asyncio.sleep(0)
        assert order == ["commit-checked"]
        assert coordinator.is_valid(ticket)  # the switch is still waiting for the lock

        release.set()
        await asyncio.gather(committing, reconfiguring)
        assert order == ["commit-checked", "commit-done"]
        assert not coordinator.is_valid(ticket)

    asyncio.run(scenario())


def test_agents_do_not_block_each_other() -> None:
    """R-WRITE-7: the lock is per agent."""

    async def scenario() -> None:
        coordinator = WriteCoordinator(AsyncioScheduler())
        async with coordinator.exclusive("agent-1"):
            entered = asyncio.create_task(_enter(coordinator, "agent-2"))
            await asyncio.wait_for(entered, timeout=5)

    async def _enter(coordinator: WriteCoordinator, agent_id: str) -> None:
        async with coordinator.exclusive(agent_id):
            pass

    asyncio.run(scenario())
