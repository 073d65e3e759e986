"""Each claim-store role contract runs against a store implementing only what it calls
(R-ARCH-5): a third-party store can implement one role — directives alone here — and pass
that role's suite without the others; a store missing a role is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_contracts.claim_store import (
    ClaimRecordsContract,
    ClaimSearchContract,
    DirectiveStoreContract,
    EmbeddingBookkeepingContract,
    ForgettingContract,
)
from memory_contracts.claim_store.base import open_store
from memory_contracts.claim_store.support import CONTRACT_EPOCH
from memory_contracts.fake_claim_reads import FakeClaimSearch, FakeEmbeddingBookkeeping
from memory_contracts.fake_claim_records import FakeClaimRecords
from memory_contracts.fake_directives import InMemoryDirectives
from memory_contracts.fake_forgetting import FakeForgetting
from memory_contracts.fakes import ManualClock
from memory_core.ports.claims import ClaimSearch, ClaimStore, ClaimWriter, DirectiveStore
from memory_core.ports.secrets import SecretPolicy


class TestDirectivesAlone(DirectiveStoreContract):
    """R-DIR-1..3 on an object that stores nothing but directives."""

    def make_directive_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> InMemoryDirectives:
        return InMemoryDirectives(secret_policy=secret_policy)


class TestRecordsAlone(ClaimRecordsContract):
    def make_records_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> FakeClaimRecords:
        return FakeClaimRecords(secret_policy=secret_policy)


class _RecordsAndSearch(FakeClaimRecords, FakeClaimSearch):
    pass


class TestSearchOverRecords(ClaimSearchContract):
    def make_search_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> _RecordsAndSearch:
        return _RecordsAndSearch(secret_policy=secret_policy)


class _RecordsAndEmbeddings(FakeClaimRecords, FakeEmbeddingBookkeeping):
    pass


class TestEmbeddingsOverRecords(EmbeddingBookkeepingContract):
    def make_embedding_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> _RecordsAndEmbeddings:
        return _RecordsAndEmbeddings(secret_policy=secret_policy)


class _RecordsAndForgetting(FakeClaimRecords, FakeForgetting):
    pass


class TestForgettingOverRecords(ForgettingContract):
    def make_forgetting_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> _RecordsAndForgetting:
        return _RecordsAndForgetting(secret_policy=secret_policy)


def test_a_directives_only_store_is_no_claim_store() -> None:
    """R-ARCH-5: the one-role store really has one role, so its suite proves it alone."""
    store = InMemoryDirectives()
    assert isinstance(store, DirectiveStore)
    assert not isinstance(store, ClaimWriter) and not isinstance(store, ClaimStore)


@pytest.mark.parametrize(
    ("store", "role", "missing"),
    [
        (InMemoryDirectives(), ClaimSearch, "search_fts"),
        (FakeClaimRecords(), ClaimStore, "create_directive"),
    ],
)
def test_a_store_missing_a_role_is_refused_naming_its_methods(
    tmp_path: Path, store: object, role: type, missing: str
) -> None:
    """R-ARCH-5: a contract fails loudly, by method name, on a store lacking a role it calls."""
    opened = open_store(lambda *_, **__: store, role, tmp_path, ManualClock(CONTRACT_EPOCH))
    with pytest.raises(TypeError, match=missing):
        next(opened)
