"""How long a store call waits for another connection's lock (R-READ-1, R-HOST-1): the
whole busy timeout off the event loop, a short one on it, and after one call on the loop
gave up, single attempts until the back-off has passed (`connection.LockWait`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator

import apsw
import pytest
from conftest import draft

from memory_adapters.sqlite_store import ApswClaimStore
from memory_adapters.sqlite_store.connection import LockWait
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import WriteOrigin
from memory_core.domain.errors import StoreError


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _waited(wait: LockWait, clock: FakeTime) -> float:
    """Run the handler as SQLite would for one busy call; the seconds it waited."""
    started = clock.now
    prior = 0
    while wait(prior):
        prior += 1
    return clock.now - started


@pytest.mark.parametrize(("on_loop", "expected"), [(False, 2.0), (True, 0.25)])
def test_a_call_waits_the_timeout_of_where_it_runs(on_loop: bool, expected: float) -> None:
    clock = FakeTime()
    wait = LockWait(
        timeout_ms=2_000,
        loop_timeout_ms=250,
        monotonic=clock.monotonic,
        sleep=clock.sleep,
        on_loop=lambda: on_loop,
    )
    assert _waited(wait, clock) == pytest.approx(expected, abs=0.03)


def test_after_a_call_on_the_loop_gave_up_the_next_ones_do_not_wait_until_the_backoff() -> None:
    clock = FakeTime()
    on_loop = [True]
    wait = LockWait(
        timeout_ms=2_000,
        loop_timeout_ms=250,
        backoff_s=1.0,
        monotonic=clock.monotonic,
        sleep=clock.sleep,
        on_loop=lambda: on_loop[0],
    )
    assert _waited(wait, clock) == pytest.approx(0.25, abs=0.03)
    assert [_waited(wait, clock) for _ in range(20)] == [0.0] * 20
    on_loop[0] = False  # a thread's call is not the loop's to spare
    assert _waited(wait, clock) == pytest.approx(2.0, abs=0.03)
    clock.now += 1.0
    on_loop[0] = True
    assert _waited(wait, clock) == pytest.approx(0.25, abs=0.03)
    with wait.single_attempt():
        assert _waited(wait, clock) == 0.0


@pytest.fixture
def foreign_lock(store: ApswClaimStore) -> Iterator[Callable[[float], None]]:
    """Hold the write lock from another connection, released after `seconds` by a timer."""
    holder = apsw.Connection(str(store.path))
    timers: list[threading.Timer] = []

    def hold(seconds: float) -> None:
        holder.execute("BEGIN IMMEDIATE")
        timer = threading.Timer(seconds, lambda: holder.execute("ROLLBACK"))
        timers.append(timer)
        timer.start()

    yield hold
    for timer in timers:
        timer.join()
    holder.close()


def test_a_write_on_the_loop_gives_up_quickly_and_one_off_it_outwaits_a_short_lock(
    open_store: Callable[..., ApswClaimStore],
    foreign_lock: Callable[[float], None],
    clock: ManualClock,
) -> None:
    """R-READ-1: on the loop an insert behind a foreign lock fails with StoreError after
    ~loop_busy_timeout_ms, not the 5 s busy timeout; off the loop it waits and succeeds."""
    store = open_store(busy_timeout_ms=5_000, loop_busy_timeout_ms=100)
    now = clock.now()
    foreign_lock(1.0)

    async def on_loop() -> float:
        started = time.monotonic()
        with pytest.raises(StoreError, match="busy"):
            store.insert(draft("tea on the loop"), origin=WriteOrigin.USER_ADD, now=now)
        return time.monotonic() - started

    assert asyncio.run(on_loop()) < 0.6
    started = time.monotonic()
    outcome = store.insert(draft("tea off the loop"), origin=WriteOrigin.USER_ADD, now=now)
    assert outcome.claim is not None
    assert 0.3 < time.monotonic() - started < 4.0
