"""Handing the GIL over from Python-heavy work on a worker thread (issue 15).

CPython's GIL does not share itself fairly between a thread that computes in Python and one
that keeps releasing it for short native calls. The loop's SQLite work is the second kind:
apsw releases the GIL around every prepare and step and must take it back after each, and
while a worker thread runs the rules extractor or the local model's tokenizer, each take-back
waits until the worker is forced off, a switch interval (5 ms) later. Measured: the
embedding drain's pending read, 1-2 ms of CPU, took 12-47 ms on the loop beside a chunk's
extraction, and ended when the extraction did; a turn's store calls would wait the same way.

`GilYield` is called between units of such work (a message, a text): at most once per
`interval` it sleeps for zero seconds, which releases the GIL long enough for a waiting
thread to take it, so the loop's calls wait for a fraction of a millisecond instead. A zero
sleep costs about 60 µs of wall time here, so it is rationed by time, not made per unit.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["GIL_YIELD_SECONDS", "GilYield"]

# Work between two hand-overs: the longest a loop call waits behind the worker, and a zero
# sleep every millisecond costs the worker about 6 % of its wall time at most.
GIL_YIELD_SECONDS = 0.001


class GilYield:
    """Call between units of Python-heavy work; yields the GIL once `interval` has passed
    since the last yield (or since it was made). One per run of work, on its own thread."""

    __slots__ = ("_interval", "_last", "_sleep", "_timer")

    def __init__(
        self,
        interval: float = GIL_YIELD_SECONDS,
        *,
        timer: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._interval = interval
        self._timer = timer
        self._sleep = sleep
        self._last = timer()

    def __call__(self) -> None:
        if self._timer() - self._last >= self._interval:
            self._sleep(0)
            self._last = self._timer()
