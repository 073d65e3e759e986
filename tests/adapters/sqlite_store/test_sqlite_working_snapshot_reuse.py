"""The turn's read of the stored working projection reuses the structured snapshot only while
the stored payload is the same text (R-READ-9): a rebuilt row is read afresh."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import attrs
import pytest

from memory_adapters.offload import InlineCalls
from memory_adapters.sql_claims import projection
from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.services.read.working import WorkingMemory
from memory_core.settings import MemorySettings

A = "agent-a"


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projection, "_LAST_SNAPSHOT", {})


def _rebuild(store: ApswClaimStore, clock: ManualClock) -> None:
    working = WorkingMemory(
        store=store,
        calls=InlineCalls(),
        domain_clock=clock,
        infra_clock=clock,
        settings=MemorySettings(),
        scheduler=None,
    )
    deadline = Deadline.after(clock, 5.0)
    assert asyncio.run(working.rebuild(A, deadline=deadline, cancel=CancellationToken()))


def _text(store: ApswClaimStore) -> str:
    snapshot = store.working_projection(A).snapshot
    assert snapshot is not None
    return snapshot.text or ""


def test_the_same_payload_is_the_same_snapshot_and_another_one_is_read_afresh(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    store.insert(make_draft("tea in the morning"), origin=WriteOrigin.EXTRACTION, now=clock.now())
    _rebuild(store, clock)
    stored = store.working_projection(A)
    assert stored.snapshot is not None
    assert store.working_projection(A).snapshot is stored.snapshot
    # Another payload at the same generation (no trigger cleared the row in between): a
    # cache keyed by the agent alone would keep showing the first one.
    other = attrs.evolve(stored.snapshot, text="coffee in the evening")
    assert store.store_working_projection(A, other, generation=stored.generation)
    assert _text(store) == "coffee in the evening"


def test_a_retired_row_leaves_the_kept_snapshot(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    """R-FORGET-1: once the agent's row holds no payload, the process holds none either."""
    outcome = store.insert(
        make_draft("my locker code is in the blue notebook"),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    assert outcome.claim is not None
    _rebuild(store, clock)
    assert "my locker code is in the blue notebook" in _text(store)
    store.delete(A, outcome.claim.id, now=clock.now())
    stored = store.working_projection(A)
    held = [snapshot.text or "" for _, snapshot in projection._LAST_SNAPSHOT.values()]
    assert stored.snapshot is None or "blue notebook" not in (stored.snapshot.text or "")
    assert not any("blue notebook" in text for text in held)
