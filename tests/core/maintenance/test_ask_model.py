"""A maintenance step's model call is reserved from the pass's budget first (R-MAINT-1,
reference §8.3): the step's cap, the pass's call cap and its input-token cap each refuse a
call before anything is asked, and a refused call takes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import Deadline
from memory_core.domain.tokens import estimate_tokens
from memory_core.services.maintenance.fence import PassFence, PassTally, ask_model
from memory_core.settings import MemorySettings

SYSTEM = "Decide whether the two memories say the same thing."
PROMPT = '{"memory_a": "The user likes tea.", "memory_b": "The user enjoys tea."}'
COST = estimate_tokens(SYSTEM) + estimate_tokens(PROMPT) + 32


class _Gateway:
    """Answers every completion; counts what it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    async def complete(self, **_: Any) -> str:
        self.asked += 1
        return '{"same": true}'


def _ask(gateway: _Gateway, tally: PassTally, settings: MemorySettings) -> str | None:
    clock = ManualClock()
    return asyncio.run(
        ask_model(
            gateway,  # type: ignore[arg-type]
            "agent-a",
            step="merge",
            settings=settings,
            system=SYSTEM,
            prompt=PROMPT,
            temperature=0.0,
            max_tokens=32,
            json_output=True,
            fence=PassFence(epoch=0, current=lambda: 0),
            deadline=Deadline.after(clock, 5.0),
            tally=tally,
        )
    )


def test_a_reserved_call_is_asked_and_counts_its_estimated_input() -> None:
    """R-MAINT-1: system, prompt and the answer's room are what the budget is charged."""
    gateway, tally = _Gateway(), PassTally()
    assert _ask(gateway, tally, MemorySettings()) == '{"same": true}'
    assert gateway.asked == 1
    assert (tally.llm_calls, tally.input_tokens, tally.calls_by_step) == (1, COST, {"merge": 1})


@pytest.mark.parametrize(
    ("settings", "tally"),
    [
        (MemorySettings(maintenance_merge_llm_calls=1), PassTally(calls_by_step={"merge": 1})),
        (MemorySettings(maintenance_llm_calls=4), PassTally(llm_calls=4)),
        (MemorySettings(maintenance_input_tokens=COST - 1), PassTally()),
    ],
    ids=["step cap", "pass cap", "input tokens"],
)
def test_a_refused_call_asks_nothing_and_takes_nothing(
    settings: MemorySettings, tally: PassTally
) -> None:
    """R-MAINT-1: a spent budget answers None before the provider is called."""
    gateway = _Gateway()
    before = (tally.llm_calls, tally.input_tokens, dict(tally.calls_by_step))
    assert _ask(gateway, tally, settings) is None
    assert gateway.asked == 0
    assert (tally.llm_calls, tally.input_tokens, tally.calls_by_step) == before
    assert tally.llm_failures == 0
