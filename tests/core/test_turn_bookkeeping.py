"""Access counts of a session's turns are coalesced into one write, and stay exact (R-READ-7).

A turn prepared right after another used to pay for the previous turn's access write (one
transaction each); now the turns within `ACCESS_COALESCE_SECONDS` share one blocking hop.
Every selection is still counted once per turn, and `drain` writes what is pending at once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

import pytest

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_adapters.offload import InlineCalls
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import Deadline
from memory_core.domain.claims import ClaimKind
from memory_core.domain.manifest import SelectedItem, SelectionManifest
from memory_core.services.read import bookkeeping
from memory_core.services.read.bookkeeping import TurnBookkeeping

A = "agent-a"


class CountingStore:
    """`record_access` only: what each call counted, and when."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], datetime]] = []
        self.fail = False

    def record_access(self, agent_id: str, claim_ids: Sequence[str], *, now: datetime) -> int:
        assert agent_id == A
        if self.fail:
            raise OSError("disk full")
        self.calls.append((tuple(claim_ids), now))
        return len(claim_ids)

    def counts(self) -> Counter[str]:
        return Counter(cid for ids, _ in self.calls for cid in ids)


def _manifest(*ids: str) -> SelectionManifest:
    return SelectionManifest(
        selected=tuple(SelectedItem(id=i, kind=ClaimKind.SEMANTIC) for i in ids)
    )


def _records(
    store: CountingStore, clock: ManualClock, scheduler: AsyncioScheduler | None = None
) -> TurnBookkeeping:
    return TurnBookkeeping(
        agent_id=A,
        session_id="s1",
        store=store,  # type: ignore[arg-type]
        anchors=None,
        calls=InlineCalls(),
        domain_clock=clock,
        infra_clock=clock,
        scheduler=scheduler or AsyncioScheduler(),
        seconds=5.0,
    )


async def _turns(
    records: TurnBookkeeping, clock: ManualClock, *selections: tuple[str, ...]
) -> None:
    for index, ids in enumerate(selections):
        clock.advance(1)
        await records.record(
            f"m{index}",
            _manifest(*ids),
            deadline=Deadline.after(clock, 5.0),
            written=lambda _: None,
        )


@pytest.fixture(autouse=True)
def short_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bookkeeping, "ACCESS_COALESCE_SECONDS", 0.05)


def test_turns_within_the_window_are_counted_exactly_by_one_hop() -> None:
    """R-READ-7: k selections of an id in k turns count k, in max(k) calls, not one per turn."""
    store, clock = CountingStore(), ManualClock()

    async def go() -> None:
        records = _records(store, clock)
        await _turns(records, clock, ("x", "y"), ("x",), ("x", "z"), ("w",))
        assert store.calls == []  # nothing written while the window is open
        await asyncio.sleep(0.2)  # the window passes: one flush
        assert store.counts() == Counter({"x": 3, "y": 1, "z": 1, "w": 1})
        assert len(store.calls) == 3  # x's three levels, the others inside the first
        assert {now for _, now in store.calls} == {clock.now()}  # the latest turn's time
        await records.drain()

    asyncio.run(go())


def test_drain_writes_the_pending_counts_without_waiting_out_the_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bookkeeping, "ACCESS_COALESCE_SECONDS", 60.0)
    store, clock = CountingStore(), ManualClock()

    async def go() -> None:
        records = _records(store, clock)
        await _turns(records, clock, ("x",), ("x", "y"))
        await asyncio.wait_for(records.drain(), timeout=5.0)
        assert store.counts() == Counter({"x": 2, "y": 1})
        await _turns(records, clock, ("y",))  # a later turn starts a window of its own
        await asyncio.wait_for(records.drain(), timeout=5.0)
        assert store.counts() == Counter({"x": 2, "y": 2})

    asyncio.run(go())


def test_a_failing_count_is_logged_and_the_next_window_counts_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """R-READ-1: best effort: a store error loses that window's counts, nothing else."""
    store, clock = CountingStore(), ManualClock()

    async def go() -> None:
        records = _records(store, clock)
        store.fail = True
        await _turns(records, clock, ("x",))
        await records.drain()
        store.fail = False
        await _turns(records, clock, ("y",))
        await records.drain()

    asyncio.run(go())
    assert store.counts() == Counter({"y": 1})
    assert "access accounting skipped for agent agent-a: OSError" in caplog.text


def test_a_turn_without_a_tape_starts_no_anchor_work() -> None:
    """R-READ-1: with no anchor writer there is nothing to append, so the turn neither spawns
    the anchor's task nor waits a loop iteration for it; the access count still follows."""
    store, clock = CountingStore(), ManualClock()
    scheduler = AsyncioScheduler()
    names: list[str] = []
    spawn = scheduler.spawn

    def watched(work, *, name):  # type: ignore[no-untyped-def]
        names.append(name)
        return spawn(work, name=name)

    scheduler.spawn = watched  # type: ignore[method-assign]

    async def go() -> None:
        records = _records(store, clock, scheduler)
        await _turns(records, clock, ("x",))
        await records.drain()

    asyncio.run(go())
    assert names == [f"memory-access:{A}"]
    assert store.counts() == Counter({"x": 1})
