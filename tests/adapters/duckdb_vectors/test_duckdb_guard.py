"""Native calls under a deadline: interrupted, cancelled or quarantined, never a hang (R-VEC-3)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest

from memory_adapters.duckdb_vectors.guard import AbortFlag, NativeGuard, translate
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    DeadlineExceeded,
    OperationCancelled,
    StoreError,
    StoreQuarantined,
    ValidationError,
)

ENDLESS = "SELECT count(*) FROM range(1000000000000) a"


@pytest.fixture
def conn() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    yield connection
    connection.close()


def test_a_call_that_settles_returns_its_result(clock: ManualClock) -> None:
    """R-VEC-3: the common case is just the worker's result."""
    guard = NativeGuard(grace_seconds=1.0, workers=2, spare=2)

    async def scenario() -> int:
        return await guard.run(
            lambda abort: 41 + 1,
            what="sum",
            deadline=Deadline.after(clock, 5),
            cancel=CancellationToken(),
        )

    assert asyncio.run(scenario()) == 42


def test_an_overrunning_query_is_interrupted_and_reported_as_deadline(
    clock: ManualClock, conn: duckdb.DuckDBPyConnection
) -> None:
    """R-VEC-3: past the deadline the connection is interrupted; the caller gets
    DeadlineExceeded and the connection stays usable."""
    guard = NativeGuard(grace_seconds=5.0, workers=2, spare=2)

    async def scenario() -> None:
        with pytest.raises(DeadlineExceeded):
            await guard.run(
                lambda abort: conn.execute(ENDLESS).fetchall(),
                what="endless",
                deadline=Deadline.after(clock, 0.05),
                cancel=CancellationToken(),
                interrupt=conn.interrupt,
            )

    asyncio.run(scenario())
    assert conn.execute("SELECT 42").fetchall() == [(42,)]


def test_cancelling_the_token_interrupts_a_running_query(
    clock: ManualClock, conn: duckdb.DuckDBPyConnection
) -> None:
    """R-PROV-3: cancellation reaches the native call and is reported as OperationCancelled."""
    guard = NativeGuard(grace_seconds=5.0, workers=2, spare=2)
    token = CancellationToken()

    async def scenario() -> None:
        started = asyncio.Event()
        loop = asyncio.get_running_loop()

        def work(abort: AbortFlag) -> object:
            loop.call_soon_threadsafe(started.set)
            return conn.execute(ENDLESS).fetchall()

        call = asyncio.ensure_future(
            guard.run(
                work,
                what="endless",
                deadline=Deadline.after(clock, 60),
                cancel=token,
                interrupt=conn.interrupt,
            )
        )
        await started.wait()
        token.cancel("user stopped")
        with pytest.raises(OperationCancelled):
            await call

    asyncio.run(scenario())


def test_cancelling_the_awaiting_task_interrupts_the_native_call(
    clock: ManualClock, conn: duckdb.DuckDBPyConnection
) -> None:
    """R-VEC-3: an asyncio cancellation stops the worker before it propagates."""
    guard = NativeGuard(grace_seconds=5.0, workers=2, spare=2)
    finished = threading.Event()

    async def scenario() -> None:
        started = asyncio.Event()
        loop = asyncio.get_running_loop()

        def work(abort: AbortFlag) -> object:
            loop.call_soon_threadsafe(started.set)
            try:
                return conn.execute(ENDLESS).fetchall()
            finally:
                finished.set()

        call = asyncio.ensure_future(
            guard.run(
                work,
                what="endless",
                deadline=Deadline.after(clock, 60),
                cancel=CancellationToken(),
                interrupt=conn.interrupt,
            )
        )
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(scenario())
    assert finished.is_set()


def test_a_call_that_ignores_the_interrupt_is_quarantined_after_the_grace_period(
    clock: ManualClock, conn: duckdb.DuckDBPyConnection
) -> None:
    """R-VEC-3: a native call that cannot be stopped becomes StoreQuarantined, not a hang."""
    release = threading.Event()

    def stuck(value: int) -> int:
        release.wait(30)  # a Python UDF: DuckDB's interrupt cannot preempt it
        return value

    conn.create_function("stuck", stuck, ["BIGINT"], "BIGINT", type="native")
    guard = NativeGuard(grace_seconds=0.1, workers=2, spare=2)
    worker: list[threading.Thread] = []

    def work(abort: AbortFlag) -> object:
        worker.append(threading.current_thread())
        return conn.execute("SELECT stuck(1)").fetchall()

    async def scenario() -> None:
        with pytest.raises(StoreQuarantined):
            await guard.run(
                work,
                what="stuck",
                deadline=Deadline.after(clock, 0.05),
                cancel=CancellationToken(),
                interrupt=conn.interrupt,
            )

    try:
        asyncio.run(scenario())
    finally:
        release.set()
        guard.close()  # the released worker then exits instead of waiting for more calls
        for thread in worker:
            thread.join(10)
    assert worker and not worker[0].is_alive()  # it did run, and ends once released


def test_the_abort_flag_stops_python_work_between_native_statements(clock: ManualClock) -> None:
    """R-VEC-3: worker code that checks the flag stops at its next check."""
    guard = NativeGuard(grace_seconds=5.0, workers=2, spare=2)
    gate = threading.Event()

    def work(abort: AbortFlag) -> str:
        gate.wait(5)
        abort.check()
        return "should not get here"

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(DeadlineExceeded):
            await guard.run(
                work,
                what="paged",
                deadline=Deadline.after(clock, 0.02),
                cancel=CancellationToken(),
                interrupt=lambda: loop.call_soon_threadsafe(gate.set),
            )

    asyncio.run(scenario())


def test_expired_deadline_and_cancelled_token_start_no_worker(clock: ManualClock) -> None:
    """R-VEC-3: nothing runs when the call is already out of time or cancelled."""
    guard = NativeGuard(grace_seconds=1.0, workers=2, spare=2)
    ran: list[bool] = []
    token = CancellationToken()
    token.cancel()

    async def scenario() -> None:
        with pytest.raises(DeadlineExceeded):
            await guard.run(
                lambda abort: ran.append(True),
                what="x",
                deadline=Deadline.after(clock, 0),
                cancel=CancellationToken(),
            )
        with pytest.raises(OperationCancelled):
            await guard.run(
                lambda abort: ran.append(True),
                what="x",
                deadline=Deadline.after(clock, 5),
                cancel=token,
            )

    asyncio.run(scenario())
    assert ran == []


def test_library_errors_become_domain_errors(clock: ManualClock) -> None:
    """R-VEC-3: duckdb exceptions never leak; fatal ones mean quarantine; domain errors pass."""
    assert type(translate(duckdb.CatalogException("no table"), "x")) is StoreError
    fatal = translate(duckdb.FatalException("database has been invalidated"), "x")
    assert isinstance(fatal, StoreQuarantined)
    internal = translate(duckdb.Error("INTERNAL Error: something broke"), "x")
    assert isinstance(internal, StoreQuarantined)
    mine = ValidationError("vector", "bad")
    assert translate(mine, "x") is mine
    guard = NativeGuard(grace_seconds=1.0, workers=2, spare=2)

    def fails(abort: AbortFlag) -> None:
        raise duckdb.ConversionException("could not convert [0.1, 0.2, 0.3]")

    async def scenario() -> None:
        with pytest.raises(StoreError) as raised:
            await guard.run(
                fails, what="write", deadline=Deadline.after(clock, 5), cancel=CancellationToken()
            )
        # The message names the operation and the error type, never the values involved.
        assert "0.1" not in str(raised.value)
        assert "ConversionException" in str(raised.value)

    asyncio.run(scenario())


def test_pooled_work_returns_its_result_or_stops_waiting_at_the_deadline_or_cancel(
    clock: ManualClock,
) -> None:
    """R-VEC-3: an uninterruptible scan never holds the caller past its deadline or cancel."""
    guard = NativeGuard(grace_seconds=1.0, workers=2, spare=2)
    release = threading.Event()
    pool = ThreadPoolExecutor(max_workers=1)
    token = CancellationToken()

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        assert (
            await guard.run_pooled(
                pool,
                lambda: "scanned",
                what="scan",
                deadline=Deadline.after(clock, 5),
                cancel=CancellationToken(),
            )
            == "scanned"
        )
        with pytest.raises(DeadlineExceeded):
            await guard.run_pooled(
                pool,
                lambda: release.wait(30),
                what="scan",
                deadline=Deadline.after(clock, 0.02),
                cancel=CancellationToken(),
            )
        loop.call_later(0.02, token.cancel)
        with pytest.raises(OperationCancelled):
            await guard.run_pooled(
                pool,
                lambda: release.wait(30),
                what="scan",
                deadline=Deadline.after(clock, 30),
                cancel=token,
            )

    try:
        asyncio.run(scenario())
    finally:
        release.set()
        pool.shutdown(wait=True)


def test_workers_are_reused_across_calls(clock: ManualClock) -> None:
    """R-VEC-3: calls run on long-lived workers, not a thread started per call."""
    guard = NativeGuard(grace_seconds=1.0, workers=2, spare=2)
    seen: set[int] = set()

    def work(abort: AbortFlag) -> None:
        seen.add(threading.get_ident())

    async def scenario() -> None:
        for _ in range(50):
            await guard.run(
                work, what="tiny", deadline=Deadline.after(clock, 5), cancel=CancellationToken()
            )

    asyncio.run(scenario())
    guard.close()
    assert len(seen) == 1 and guard.workers.threads <= 1


def test_hung_calls_cannot_pile_up_threads_and_a_waiting_call_ends_on_time(
    clock: ManualClock,
) -> None:
    """R-VEC-3: with every worker and spare hung, threads stay at `workers + spare`; a new
    call waits for a worker only until its deadline, then DeadlineExceeded (not a
    quarantine: it never ran); once the hung calls return, calls run again."""
    guard = NativeGuard(grace_seconds=0.05, workers=1, spare=1)
    release = threading.Event()
    started: list[int] = []

    def stuck(abort: AbortFlag) -> None:
        started.append(threading.get_ident())
        release.wait(30)  # deaf to the abort flag and to interrupts: a hang

    async def call(work: Callable[[AbortFlag], object], seconds: float) -> object:
        return await guard.run(
            work, what="call", deadline=Deadline.after(clock, seconds), cancel=CancellationToken()
        )

    async def scenario() -> None:
        for _ in range(2):
            with pytest.raises(StoreQuarantined):
                await call(stuck, 0.02)
        assert guard.workers.threads == 2 and len(set(started)) == 2
        loop = asyncio.get_running_loop()
        begun = loop.time()
        with pytest.raises(DeadlineExceeded):
            await call(stuck, 0.2)
        assert loop.time() - begun < 5.0  # the deadline, not the grace period or a hang
        assert guard.workers.threads == 2 and len(started) == 2  # it never ran
        release.set()
        assert await call(lambda abort: "back", 5.0) == "back"
        assert guard.workers.threads <= 2

    try:
        asyncio.run(scenario())
    finally:
        release.set()
        guard.close()
