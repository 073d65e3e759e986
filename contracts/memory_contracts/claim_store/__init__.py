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
| `ConsolidationContract` | `make_consolidation_store` | + `Consolidation` (and delete, lineage) |
| `ConflictsContract` | `make_conflicts_store` | + `Conflicts`, `LineageReader` |
| `PersonasContract` | `make_personas_store` | + `Personas` |
| `WorkingProjectionsContract` | `make_working_store` | + `WorkingProjections` |

Every role but directives needs the claim records to set its cases up. A full store
subclasses `ClaimStoreContract` and implements `make_claim_store` only: it runs every role's
cases against one store per test, plus the cases that need all roles at once (one namespace
across them: isolation, the clear fence, retirement). Requirement ids in the docstrings say
what each case proves.
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_contracts.claim_store.base import role_fixture
from memory_contracts.claim_store.conflicts import ConflictsContract
from memory_contracts.claim_store.consolidation import ConsolidationContract
from memory_contracts.claim_store.directives import DirectiveStoreContract
from memory_contracts.claim_store.embeddings import EmbeddingBookkeepingContract
from memory_contracts.claim_store.forgetting import ForgettingContract
from memory_contracts.claim_store.lineage import LineageContract
from memory_contracts.claim_store.maintenance import StoreMaintenanceContract
from memory_contracts.claim_store.personas import PersonasContract
from memory_contracts.claim_store.records import ClaimRecordsContract
from memory_contracts.claim_store.search import ClaimSearchContract
from memory_contracts.claim_store.whole_store import CrossRoleCases
from memory_contracts.claim_store.working import WorkingProjectionsContract
from memory_core.ports.claims import ClaimStore

__all__ = [
    "ClaimRecordsContract",
    "ClaimSearchContract",
    "ClaimStoreContract",
    "ConflictsContract",
    "ConsolidationContract",
    "DirectiveStoreContract",
    "EmbeddingBookkeepingContract",
    "ForgettingContract",
    "LineageContract",
    "PersonasContract",
    "StoreMaintenanceContract",
    "WorkingProjectionsContract",
]


def _the_claim_store(name: str) -> Any:
    @pytest.fixture(name=name)
    def same(self: object, claim_store: ClaimStore) -> ClaimStore:
        return claim_store

    return same


class ClaimStoreContract(
    ClaimRecordsContract,
    LineageContract,
    ClaimSearchContract,
    EmbeddingBookkeepingContract,
    DirectiveStoreContract,
    ForgettingContract,
    StoreMaintenanceContract,
    ConsolidationContract,
    ConflictsContract,
    PersonasContract,
    WorkingProjectionsContract,
    CrossRoleCases,
):
    """Inherit, implement `make_claim_store`; pytest collects every role's cases."""

    claim_store = role_fixture("claim_store", "make_claim_store", ClaimStore)
    # Every role's fixture is the one full store of the test.
    records_store = _the_claim_store("records_store")
    lineage_store = _the_claim_store("lineage_store")
    search_store = _the_claim_store("search_store")
    embedding_store = _the_claim_store("embedding_store")
    directive_store = _the_claim_store("directive_store")
    forgetting_store = _the_claim_store("forgetting_store")
    maintenance_store = _the_claim_store("maintenance_store")
    consolidation_store = _the_claim_store("consolidation_store")
    conflicts_store = _the_claim_store("conflicts_store")
    personas_store = _the_claim_store("personas_store")
    working_store = _the_claim_store("working_store")
