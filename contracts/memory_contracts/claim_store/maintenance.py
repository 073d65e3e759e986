"""`StoreMaintenanceContract`: the `StoreMaintenance` role — repair never alters a valid
row, and a closed store refuses every call (R-TIME-4, R-SCOPE-4, R-STORE-1)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import EXTRACTION, A, RoleCases, role_fixture
from memory_contracts.claim_store.support import CONTRACT_EPOCH, claim_draft, state_temporal
from memory_contracts.fakes import ManualClock
from memory_core.domain.errors import StoreError
from memory_core.domain.scope import Scope
from memory_core.ports.claims import ClaimReader, ClaimWriter, StoreMaintenance

__all__ = ["MaintenanceStore", "StoreMaintenanceContract"]


@runtime_checkable
class MaintenanceStore(ClaimReader, ClaimWriter, StoreMaintenance, Protocol):
    """What the contract calls: its role, and the claim records that set cases up."""


class StoreMaintenanceContract(RoleCases):
    """Inherit, implement `make_maintenance_store`; pytest collects the cases."""

    maintenance_store = role_fixture(
        "maintenance_store", "make_maintenance_store", MaintenanceStore
    )

    def test_repair_leaves_a_valid_store_untouched(
        self, maintenance_store: MaintenanceStore, clock: ManualClock
    ) -> None:
        """R-TIME-4, R-SCOPE-4: startup repair never alters a valid row."""
        rows = [
            self._add(maintenance_store, clock, "plain fact"),
            self._add(maintenance_store, clock, "timed", temporal=state_temporal(CONTRACT_EPOCH)),
            self._add(maintenance_store, clock, "user scoped", scope=Scope.user("u1")),
        ]
        report = maintenance_store.repair(now=clock.now())
        assert (report.temporal_archived, report.scope_fixed, report.scope_deleted) == (0, 0, 0)
        assert [maintenance_store.get(A, row.id) for row in rows] == rows

    def test_a_closed_store_refuses_every_call(
        self, maintenance_store: MaintenanceStore, clock: ManualClock
    ) -> None:
        """R-STORE-1: close is idempotent; later calls raise the typed StoreError."""
        claim = self._add(maintenance_store, clock, "before close")
        maintenance_store.close()
        maintenance_store.close()
        with pytest.raises(StoreError):
            maintenance_store.get(A, claim.id)
        with pytest.raises(StoreError):
            maintenance_store.insert(claim_draft("after close"), origin=EXTRACTION, now=clock.now())
