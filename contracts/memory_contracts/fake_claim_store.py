"""`InMemoryClaimStore`: a deterministic `ClaimStore` for service tests, the role fakes
composed over one table. It passes the SQL stores' `ClaimStoreContract` (R-ARCH-5) as it
runs their rules, from `memory_core.storage`: each call one transaction, ids from a counter
(`mem-00000001`, `dir-00000002`, …) unless `id_factory` is given, millisecond times."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory_contracts.fake_claim_reads import FakeClaimSearch, FakeEmbeddingBookkeeping
from memory_contracts.fake_claim_records import FakeClaimRecords
from memory_contracts.fake_conflicts import FakeConflicts
from memory_contracts.fake_directives import InMemoryDirectives
from memory_contracts.fake_forgetting import FakeForgetting
from memory_contracts.fake_maintenance import FakeConsolidation
from memory_contracts.fake_personas import FakePersonas
from memory_contracts.fake_working import FakeWorkingProjections
from memory_core.domain.provenance import TombstoneIdentity
from memory_core.ports.claims import Derivation, RepairReport
from memory_core.storage.drafts import stored_time

__all__ = ["InMemoryClaimStore"]


class InMemoryClaimStore(
    FakeClaimRecords,
    FakeClaimSearch,
    FakeEmbeddingBookkeeping,
    InMemoryDirectives,
    FakeForgetting,
    FakeConsolidation,
    FakeConflicts,
    FakePersonas,
    FakeWorkingProjections,
):
    """Every role; lineage and maintenance are small enough to live here."""

    def tombstones(self, agent_id: str) -> frozenset[TombstoneIdentity]:
        """Beyond the port, for tests: the owner's tombstone identities (hashes only)."""
        return frozenset(i for owner, i in self._open().tombstones if owner == agent_id)

    def list_derivations(self, agent_id: str, claim_id: str) -> Sequence[Derivation]:
        """Not fenced by a clear, as in the SQL stores: lineage is not claim content."""
        edges = [e for (owner, *_), e in self._open().edges.items() if owner == agent_id]
        found = [e for e in edges if claim_id in (e.parent_id, e.child_id)]
        return sorted(found, key=lambda e: (e.created_at, e.parent_id, e.child_id))

    def prune_audit(self, *, older_than: datetime) -> int:
        """Always 0: the fake keeps no audit trail, and its repair records nothing."""
        self._open()
        stored_time(older_than, "older_than")
        return 0

    def repair(self, *, now: datetime) -> RepairReport:
        """Nothing to repair: rows only ever come from validated values through the API."""
        self._open()
        stored_time(now, "now")
        return RepairReport()
