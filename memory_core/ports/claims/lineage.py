"""Lineage: the derivation edges a supersede, a manual edit, a merge or a reflection
records with its mutation (R-LINEAGE-1). Writes happen inside `ClaimWriter` calls; this
role reads them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

__all__ = [
    "Derivation",
    "DerivationKind",
    "LineageReader",
]


class DerivationKind(StrEnum):
    MERGE = "merge"
    REFLECTION = "reflection"
    SUPERSEDE = "supersede"
    MANUAL_EDIT = "manual_edit"


@attrs.frozen(kw_only=True)
class Derivation:
    parent_id: str
    child_id: str
    kind: DerivationKind
    created_at: datetime


@runtime_checkable
class LineageReader(Protocol):
    """Edges of one claim, for inspection and the repair of self-edges."""

    def list_derivations(self, agent_id: str, claim_id: str) -> Sequence[Derivation]:
        """Edges where `claim_id` is parent or child, oldest first. Lineage outlives its
        endpoints (no foreign keys), so ids of deleted claims may appear."""
        ...
