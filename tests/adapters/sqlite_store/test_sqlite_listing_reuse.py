"""The working listing reuses unchanged rows' claims, and only unchanged ones (R-READ-9).

`list_claims` keeps each agent's last listing keyed by the raw column values; a row changed
by any writer — the store, or a raw connection bypassing it — must be read afresh, and a
deleted claim must leave the kept listing with the next read (R-FORGET-1).
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from memory_adapters.sql_claims import reads
from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin


def _insert(store: ApswClaimStore, clock: ManualClock, draft: ClaimDraft) -> str:
    clock.advance(1)
    outcome = store.insert(draft, origin=WriteOrigin.EXTRACTION, now=clock.now())
    assert outcome.claim is not None
    return outcome.claim.id


def _kept_contents() -> set[str]:
    return {claim.content for listing in reads._LAST_LISTING.values() for claim in listing.values()}


def test_unchanged_rows_come_back_as_the_same_claims(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    """R-READ-9: a second listing with nothing changed structures nothing again."""
    for text in ("tea in the morning", "a cat named Miso"):
        _insert(store, clock, make_draft(text))
    first = store.list_claims("agent-a", limit=10)
    second = store.list_claims("agent-a", limit=10)
    assert second == first
    assert all(a is b for a, b in zip(first, second, strict=True))


def test_a_row_changed_behind_the_store_is_read_afresh(
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    raw: apsw.Connection,
) -> None:
    """R-READ-9: the key is every column, so even a raw writer's edit is seen."""
    claim_id = _insert(store, clock, make_draft("tea in the morning"))
    assert [c.access_count for c in store.list_claims("agent-a", limit=10)] == [0]
    store.record_access("agent-a", [claim_id], now=clock.now())
    assert [c.access_count for c in store.list_claims("agent-a", limit=10)] == [1]
    raw.execute("UPDATE agent_memory SET importance = 0.9 WHERE id = ?", (claim_id,))
    assert [c.importance for c in store.list_claims("agent-a", limit=10)] == [0.9]


def test_a_deleted_claim_leaves_the_kept_listing_with_the_next_read(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    """R-FORGET-1: no forgotten text outlives the agent's next listing in the process."""
    doomed = _insert(store, clock, make_draft("my locker code is in the blue notebook"))
    _insert(store, clock, make_draft("a cat named Miso"))
    store.list_claims("agent-a", limit=10)
    assert "my locker code is in the blue notebook" in _kept_contents()
    store.delete("agent-a", doomed, now=clock.now())
    assert [c.content for c in store.list_claims("agent-a", limit=10)] == ["a cat named Miso"]
    assert "my locker code is in the blue notebook" not in _kept_contents()
