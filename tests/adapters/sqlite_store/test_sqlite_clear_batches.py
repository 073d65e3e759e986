"""A clear batch is bounded by time as well as by rows (R-FORGET-3, issue 15): secure FTS5
deletes cost up to a few ms a row, so 256 of them can hold the write lock past the 500 ms
goal; the store stops a batch once its time is spent, and the claims phase ends only after
the rows are gone and the agent's FTS table is taken apart and dropped."""

from __future__ import annotations

from collections.abc import Callable

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.ports.claims import ClearPhase


def test_a_spent_batch_commits_what_it_removed_and_the_clear_still_ends_complete(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock
) -> None:
    store = open_store(clear_batch_seconds=1e-9)  # every batch's time is spent at once
    drafts = [ClaimDraft(agent_id="a", kind="semantic", content=f"tea {i}") for i in range(40)]
    store.insert_many(drafts, origin=WriteOrigin.EXTRACTION, now=clock.now())
    store.insert(
        ClaimDraft(agent_id="b", kind="semantic", content="another agent's tea"),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    progress = store.begin_clear("a", now=clock.now())
    removed = []
    while progress.phase is ClearPhase.CLAIMS:
        progress = store.run_clear_batch("a", batch_size=256)
        removed.append(progress.batch_removed)
    # One step of 16 rows per batch; the step that came up short found the rows gone, and
    # the teardown of the agent's index and dirty state, one short step each, ended there.
    assert removed == [16, 16, 8]
    assert progress.removed_count == 40
    store.finish_clear("a")
    assert store.list_claims("a", include_inactive=True) == []
    assert [claim.content for claim in store.list_claims("b")] == ["another agent's tea"]


def test_an_unhurried_batch_removes_its_full_size(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock
) -> None:
    store = open_store(clear_batch_seconds=60)
    drafts = [ClaimDraft(agent_id="a", kind="semantic", content=f"tea {i}") for i in range(300)]
    store.insert_many(drafts, origin=WriteOrigin.EXTRACTION, now=clock.now())
    store.begin_clear("a", now=clock.now())
    first = store.run_clear_batch("a", batch_size=256)
    assert (first.phase, first.batch_removed) == (ClearPhase.CLAIMS, 256)
    last = store.run_clear_batch("a", batch_size=256)  # the rest, and the index teardown
    assert (last.phase, last.batch_removed, last.removed_count) == (ClearPhase.VECTORS, 44, 300)
