"""The background certification of a cold agent never warms an agent that is already
warm (R-VEC-4): a warm-up queued behind another would call the provider again, and a
failing provider would then drop the certificate the first one earned."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from memory_world import make_memory

from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline

A = "agent-a"


def test_a_warm_if_cold_on_a_warm_agent_returns_its_certificate_without_warming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go() -> None:
        clock = ManualClock()
        memory = make_memory(tmp_path, clock)
        await memory.remember(A, "The user's bicycle is a green Brompton.")
        assert await memory.warm(A)
        earned = memory.index.certificate(A)
        calls: list[str] = []
        real = memory.gateway.warm

        async def counted(**kwargs: object) -> object:
            calls.append("warm")
            return await real(**kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(memory.gateway, "warm", counted)
        deadline = Deadline.after(clock, 30)
        again = await memory.index.warm(
            A, deadline=deadline, cancel=CancellationToken(), if_cold=True
        )
        assert again is earned and calls == []
        memory.index.invalidate(A)
        cold = await memory.index.warm(
            A, deadline=deadline, cancel=CancellationToken(), if_cold=True
        )
        assert cold is not None and calls == ["warm"]
        await memory.aclose()

    asyncio.run(go())
