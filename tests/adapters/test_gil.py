"""`GilYield`: a Python-heavy worker hands the GIL over at most once per interval (issue 15)."""

from __future__ import annotations

import pytest

from memory_adapters.gil import GilYield


class _Timer:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("steps", "sleeps"),
    [
        ([0.0002] * 4, 0),  # 0.8 ms of work: not yet
        ([0.0002] * 5, 1),  # the fifth call is 1 ms after the start
        ([0.0002] * 12, 2),  # 1 ms, then 1 ms more counted from the last hand-over
        ([0.005, 0.005], 2),  # a long unit between two calls: one hand-over per call
    ],
)
def test_the_worker_sleeps_zero_once_per_interval_of_work(steps: list[float], sleeps: int) -> None:
    timer, slept = _Timer(), []
    pause = GilYield(0.001, timer=timer, sleep=slept.append)
    for step in steps:
        timer.now += step
        pause()
    assert slept == [0] * sleeps
