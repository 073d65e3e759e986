"""The ClaimStore contract suite, run against the in-memory fake (R-ARCH-5), plus the fake's
own promises: one-transaction rollback, storage time precision and use after close."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memory_contracts.claim_store import ClaimStoreContract
from memory_contracts.claim_store.support import (
    CONTRACT_EPOCH,
    MarkerSecretPolicy,
    claim_draft,
)
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Claim, WriteOrigin
from memory_core.domain.errors import SecretRejected, StoreError
from memory_core.ports.claims import ClaimStore, InsertStatus
from memory_core.ports.secrets import SecretPolicy


class TestInMemoryClaimStoreContract(ClaimStoreContract):
    def make_claim_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> InMemoryClaimStore:
        return InMemoryClaimStore(clock=clock, secret_policy=secret_policy)


# --- beyond the contract: the fake's own promises --------------------------------------------
A, B = "agent-a", "agent-b"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(CONTRACT_EPOCH)


@pytest.fixture
def store(clock: ManualClock) -> InMemoryClaimStore:
    return InMemoryClaimStore(clock=clock, secret_policy=MarkerSecretPolicy())


def _add(store: InMemoryClaimStore, clock: ManualClock, content: str, **fields: object) -> Claim:
    outcome = store.insert(
        claim_draft(content, **fields), origin=WriteOrigin.EXTRACTION, now=clock.now()
    )
    assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
    return outcome.claim


def test_fake_satisfies_the_port_and_defaults_to_the_pattern_policy() -> None:
    """R-ARCH-5, R-PRIV-1: a ClaimStore; without a policy it uses PatternSecretPolicy."""
    store = InMemoryClaimStore()
    assert isinstance(store, ClaimStore)
    with pytest.raises(SecretRejected):
        store.insert(
            claim_draft("key AKIAIOSFODNN7EXAMPLE"), origin=WriteOrigin.USER_ADD, now=CONTRACT_EPOCH
        )


def test_a_failing_batch_rolls_back_rows_and_released_tombstones(clock: ManualClock) -> None:
    """R-WRITE-4/5: one transaction per call — a failure mid-batch leaves no row behind and
    puts back the tombstone a user add had released."""
    ids = iter(["mem-1", "mem-2"])

    def id_factory(prefix: str) -> str:
        try:
            return next(ids)
        except StopIteration:
            raise StoreError("id source exhausted") from None

    store = InMemoryClaimStore(
        clock=clock, secret_policy=MarkerSecretPolicy(), id_factory=id_factory
    )
    forgotten = _add(store, clock, "forgotten fact")
    store.delete(A, forgotten.id, now=clock.now())
    tombstones = store.tombstones(A)
    assert len(tombstones) == 3
    with pytest.raises(StoreError):
        store.insert_many(
            [claim_draft("forgotten fact"), claim_draft("another fact")],
            origin=WriteOrigin.USER_ADD,
            now=clock.now(),
        )
    assert store.list_claims(A, include_inactive=True) == []
    assert store.tombstones(A) == tombstones
    replay = store.insert(
        claim_draft("forgotten fact"), origin=WriteOrigin.EXTRACTION, now=clock.now()
    )
    assert replay.status is InsertStatus.SUPPRESSED


def test_times_are_kept_at_the_sqlite_stores_millisecond_precision(
    store: InMemoryClaimStore,
) -> None:
    """R-TIME-1: a service test sees the same instants the SQLite store would return."""
    now = CONTRACT_EPOCH + timedelta(microseconds=123_456)
    outcome = store.insert(claim_draft("precise fact"), origin=WriteOrigin.EXTRACTION, now=now)
    assert outcome.claim is not None
    assert outcome.claim.created_at == CONTRACT_EPOCH + timedelta(milliseconds=123)
    assert store.get(A, outcome.claim.id) == outcome.claim


def test_a_closed_store_refuses_every_call(store: InMemoryClaimStore) -> None:
    """R-HOST-1: shutdown ordering bugs surface as StoreError, as on a closed connection."""
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError):
        store.list_claims(A)
    with pytest.raises(StoreError):
        store.insert(claim_draft("late fact"), origin=WriteOrigin.EXTRACTION, now=CONTRACT_EPOCH)
