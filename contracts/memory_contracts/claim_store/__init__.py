"""The claim-store contracts: one per role port of `memory_core.ports.claims`, and their union.

A store that implements one role subclasses that role's contract and its factory:

    class TestMyDirectives(DirectiveStoreContract):
        def make_directive_store(self, tmp_path, *, clock, secret_policy):
            return MyDirectives(secret_policy=secret_policy)

| contract | factory | calls |
|---|---|---|
| `ClaimRecordsContract` | `make_records_store` | `ClaimReader`, `ClaimWriter` |
| `LineageContract` | `make_lineage_store` | + `LineageReader` |
| `ClaimSearchContract` | `make_search_store` | + `ClaimSearch` |
| `EmbeddingBookkeepingContract` | `make_embedding_store` | + `EmbeddingBookkeeping` |
| `DirectiveStoreContract` | `make_directive_store` | `DirectiveStore` only |
| `ForgettingContract` | `make_forgetting_store` | + `Forgetting` |
| `StoreMaintenanceContract` | `make_maintenance_store` | + `StoreMaintenance` |

Every role but directives needs the claim records to set its cases up. A full store
subclasses `ClaimStoreContract` and implements `make_claim_store` only: it runs every role's
cases against one store per test, plus the cases that need all roles at once (one namespace
across them: isolation, the clear fence, retirement). Requirement ids in the docstrings say
what each case proves.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_contracts.claim_store.base import open_store
from memory_contracts.claim_store.directives import DirectiveStoreContract
from memory_contracts.claim_store.embeddings import EmbeddingBookkeepingContract
from memory_contracts.claim_store.forgetting import ForgettingContract
from memory_contracts.claim_store.lineage import LineageContract
from memory_contracts.claim_store.maintenance import StoreMaintenanceContract
from memory_contracts.claim_store.records import ClaimRecordsContract
from memory_contracts.claim_store.search import ClaimSearchContract
from memory_contracts.claim_store.whole_store import CrossRoleCases
from memory_contracts.fakes import ManualClock
from memory_core.ports.claims import ClaimStore
from memory_core.ports.secrets import SecretPolicy

__all__ = [
    "ClaimRecordsContract",
    "ClaimSearchContract",
    "ClaimStoreContract",
    "DirectiveStoreContract",
    "EmbeddingBookkeepingContract",
    "ForgettingContract",
    "LineageContract",
    "StoreMaintenanceContract",
]


class ClaimStoreContract(
    ClaimRecordsContract,
    LineageContract,
    ClaimSearchContract,
    EmbeddingBookkeepingContract,
    DirectiveStoreContract,
    ForgettingContract,
    StoreMaintenanceContract,
    CrossRoleCases,
):
    """Inherit, implement `make_claim_store`; pytest collects every role's cases."""

    def make_claim_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> ClaimStore:
        raise NotImplementedError

    @pytest.fixture
    def claim_store(self, tmp_path: Path, clock: ManualClock) -> Iterator[ClaimStore]:
        yield from open_store(self.make_claim_store, ClaimStore, tmp_path, clock)

    # Every role's fixture is the one full store of the test.
    @pytest.fixture
    def records_store(self, claim_store: ClaimStore) -> ClaimStore:
        return claim_store

    @pytest.fixture
    def lineage_store(self, claim_store: ClaimStore) -> ClaimStore:
        return claim_store

    @pytest.fixture
    def search_store(self, claim_store: ClaimStore) -> ClaimStore:
        return claim_store

    @pytest.fixture
    def embedding_store(self, claim_store: ClaimStore) -> ClaimStore:
        return claim_store

    @pytest.fixture
    def directive_store(self, claim_store: ClaimStore) -> ClaimStore:
        return claim_store

    @pytest.fixture
    def forgetting_store(self, claim_store: ClaimStore) -> ClaimStore:
        return claim_store

    @pytest.fixture
    def maintenance_store(self, claim_store: ClaimStore) -> ClaimStore:
        return claim_store
