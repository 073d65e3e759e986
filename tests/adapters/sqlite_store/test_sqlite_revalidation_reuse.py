"""Re-validation reuses structured claims only for rows whose every column is unchanged
(R-READ-9), and a deleted claim is never returned nor held past two generations (R-FORGET-1).

`list_applicable_by_ids` keeps structured claims by their raw column values: a revision, an
access count, a lifecycle change or a raw writer's edit is a different key, read afresh.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw
import pytest

from memory_adapters.sql_claims import reads
from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.scope import ScopeFilter

A = "agent-a"
AGENT_ONLY = ScopeFilter.agent_only()


def _insert(store: ApswClaimStore, clock: ManualClock, draft: ClaimDraft) -> str:
    clock.advance(1)
    outcome = store.insert(draft, origin=WriteOrigin.EXTRACTION, now=clock.now())
    assert outcome.claim is not None
    return outcome.claim.id


def _revalidate(store: ApswClaimStore, *ids: str):  # type: ignore[no-untyped-def]
    return store.list_applicable_by_ids(A, list(ids), scope_filter=AGENT_ONLY)


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "_REVALIDATED", reads._RowClaims(reads._REVALIDATED_ROWS))


def test_an_unchanged_row_comes_back_as_the_same_claim(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    claim_id = _insert(store, clock, make_draft("tea in the morning"))
    (first,) = _revalidate(store, claim_id)
    (second,) = _revalidate(store, claim_id)
    assert second is first


def test_a_new_revision_is_read_afresh(
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    raw: apsw.Connection,
) -> None:
    """R-READ-9: a cache keyed by id alone would show the old text after the edit."""
    claim_id = _insert(store, clock, make_draft("tea in the morning"))
    (before,) = _revalidate(store, claim_id)
    raw.execute(
        "UPDATE agent_memory SET content = 'coffee in the morning', revision = revision + 1"
        " WHERE id = ?",
        (claim_id,),
    )
    (after,) = _revalidate(store, claim_id)
    assert after.content == "coffee in the morning"
    assert after.revision == before.revision + 1


def test_any_changed_column_is_read_afresh(
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    raw: apsw.Connection,
) -> None:
    """Not only the revision: an access count, or a raw writer that bumped nothing."""
    claim_id = _insert(store, clock, make_draft("tea in the morning"))
    assert [c.access_count for c in _revalidate(store, claim_id)] == [0]
    store.record_access(A, [claim_id], now=clock.now())
    assert [c.access_count for c in _revalidate(store, claim_id)] == [1]
    raw.execute("UPDATE agent_memory SET importance = 0.9 WHERE id = ?", (claim_id,))
    assert [c.importance for c in _revalidate(store, claim_id)] == [0.9]


def test_a_deleted_or_archived_claim_is_never_returned_from_the_cache(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    doomed = _insert(store, clock, make_draft("my locker code is in the blue notebook"))
    shelved = _insert(store, clock, make_draft("a cat named Miso"))
    assert len(_revalidate(store, doomed, shelved)) == 2
    store.delete(A, doomed, now=clock.now())
    store.archive(A, shelved, now=clock.now())
    assert _revalidate(store, doomed, shelved) == []


def test_a_deleted_claim_is_not_held_past_two_generations(
    monkeypatch: pytest.MonkeyPatch,
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
) -> None:
    """R-FORGET-1 for process memory: held rows are bounded, and rotate out."""
    monkeypatch.setattr(reads, "_REVALIDATED", reads._RowClaims(2))
    doomed = _insert(store, clock, make_draft("my locker code is in the blue notebook"))
    others = [_insert(store, clock, make_draft(f"fact number {n}")) for n in range(4)]
    _revalidate(store, doomed)
    assert "my locker code is in the blue notebook" in reads._REVALIDATED.contents()
    store.delete(A, doomed, now=clock.now())
    _revalidate(store, *others)
    assert "my locker code is in the blue notebook" not in reads._REVALIDATED.contents()
    assert len(reads._REVALIDATED) <= 4


def test_moved_access_columns_are_patched_in_and_a_corrupt_one_still_skips_the_row(
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    raw: apsw.Connection,
) -> None:
    """The access columns are left out of the key (every turn writes them), yet read as
    strictly as the rest: a count a raw writer made text is a corrupt row (R-TIME-4)."""
    claim_id = _insert(store, clock, make_draft("tea in the morning"))
    (before,) = _revalidate(store, claim_id)
    clock.advance(5)
    store.record_access(A, [claim_id], now=clock.now())
    (after,) = _revalidate(store, claim_id)
    assert (after.access_count, after.last_accessed_at) == (1, clock.now())
    assert after.content == before.content and after.revision == before.revision
    raw.execute("UPDATE agent_memory SET access_count = 'many' WHERE id = ?", (claim_id,))
    assert _revalidate(store, claim_id) == []
