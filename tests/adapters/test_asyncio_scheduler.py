"""The asyncio hard timer allows for a late loop (R-READ-1, R-HOST-1).

asyncio's timeout is cooperative: the timed-out work resumes only when the loop gets to it, so
on a loop starved of CPU `run_within(work, 4)` came back after 5 or 6 s and a turn passed its
deadline plus the margin. The scheduler remembers how late its timers came back and fires
later ones that much earlier, and does not start work that would keep less than half of
its time that way.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from memory_adapters.asyncio_scheduler import AsyncioScheduler, LoopLateness
from memory_core.domain.errors import DeadlineExceeded


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _forever() -> None:
    await asyncio.Event().wait()


@pytest.mark.parametrize(
    ("late", "waited", "armed"),
    [
        (0.0, 0.0, 4.0),  # a punctual loop: the time asked for
        (0.4, 0.0, 4.0),  # lateness within the allowance costs nothing
        (1.5, 0.0, 3.0),  # 1.5 s late, 0.5 s of it allowed: fire 1 s early
        (2.5, 10.0, 3.25),  # a half-life later, half of it is remembered: 1.25 s
        (2.5, 0.0, 2.0),  # half of the time asked for is still kept
        (2.6, 0.0, None),  # less would be kept: not started
    ],
)
def test_a_timer_fires_early_by_the_lateness_seen_beyond_the_allowance(
    late: float, waited: float, armed: float | None
) -> None:
    clock = Clock()
    lateness = LoopLateness(allowance_s=0.5, half_life_s=10.0, floor=0.5, monotonic=clock)
    lateness.saw(late)
    clock.now += waited
    assert lateness.armed(4.0) == (None if armed is None else pytest.approx(armed))


def test_a_smaller_overrun_does_not_erase_a_larger_recent_one() -> None:
    clock = Clock()
    lateness = LoopLateness(allowance_s=0.0, half_life_s=10.0, floor=0.1, monotonic=clock)
    lateness.saw(2.0)
    lateness.saw(0.1)
    assert lateness.armed(4.0) == pytest.approx(2.0)


def test_run_within_learns_the_loops_lateness_and_then_returns_in_time() -> None:
    """R-READ-1: a loop held past a timer's firing is remembered, and the next timer of the
    same length comes back before its time rather than after it."""
    lateness = LoopLateness(allowance_s=0.0, half_life_s=60.0, floor=0.1)
    scheduler = AsyncioScheduler(lateness=lateness)

    async def go() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        # Another task's step holds the loop across the timer's firing time.
        loop.call_later(0.05, time.sleep, 1.2)
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            await scheduler.run_within(_forever, 0.1)
        first = time.monotonic() - started
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            await scheduler.run_within(_forever, 3.0)
        return first, time.monotonic() - started

    first, second = asyncio.run(go())
    assert first >= 1.2  # the hold made the first timer late by over 1 s
    # Armed at most 1.9 s; generous for a loaded machine, and under the 3 s asked for.
    assert second < 2.6


def test_work_the_late_loop_cannot_finish_in_time_is_not_started() -> None:
    lateness = LoopLateness(allowance_s=0.5, floor=0.5)
    lateness.saw(5.0)
    scheduler = AsyncioScheduler(lateness=lateness)
    started: list[bool] = []

    async def work() -> None:
        started.append(True)

    with pytest.raises(DeadlineExceeded, match="too late"):
        asyncio.run(scheduler.run_within(work, 4.0))
    assert started == []


def test_work_that_finishes_in_time_is_returned_and_teaches_nothing() -> None:
    lateness = LoopLateness(allowance_s=0.0)
    scheduler = AsyncioScheduler(lateness=lateness)

    async def quick() -> str:
        await asyncio.sleep(0)
        return "done"

    assert asyncio.run(scheduler.run_within(quick, 1.0)) == "done"
    assert lateness.armed(1.0) == 1.0
