"""Maintenance: startup repair, audit retention and closing the store (R-TIME-4,
R-SCOPE-4, R-STORE-1). Host lifecycle calls, never on a turn."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

__all__ = [
    "RepairReport",
    "StoreMaintenance",
]


@attrs.frozen(kw_only=True)
class RepairReport:
    """Counts and ≤20 sample ids per repair; never content."""

    temporal_archived: int = 0
    internal_normalised: int = 0
    scope_fixed: int = 0
    scope_deleted: int = 0
    clear_tombstoned: int = 0  # deleted rows a pending clear covered: tombstoned, counted
    self_edges_removed: int = 0
    fts_rebuilt: bool = False
    sample_ids: tuple[str, ...] = ()


@runtime_checkable
class StoreMaintenance(Protocol):
    """What the host runs at startup and shutdown."""

    def repair(self, *, now: datetime) -> RepairReport:
        """Startup repair of temporal and scope metadata (R-TIME-4, R-SCOPE-4), in one
        transaction: corrupt temporal fields are normalised and the claim archived
        (persona/working: normalised to atemporal); scope pairs are repaired without ever
        widening, and unrecoverable narrow rows deleted (tombstoned and counted when a
        pending clear covers them); lineage self-edges are dropped; the FTS mirror is
        rebuilt when anything changed. A valid row is never altered."""
        ...

    def prune_audit(self, *, older_than: datetime) -> int:
        """Operational retention: drop housekeeping audit events older than `older_than`.
        Never touches lineage or user-visible events. Returns the number removed."""
        ...

    def close(self) -> None:
        """Release the store (a file-backed one checkpoints first). Idempotent; any later
        call raises StoreError."""
        ...
