"""The vector-store port: a per-agent sidecar of embeddings, never an authority.

A vector hit proves nothing about authorisation; every candidate is re-validated against
the claim store before ranking (R-READ-3). The store scans exactly (R-VEC-1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity

__all__ = ["VectorHealth", "VectorHit", "VectorStore"]


@attrs.frozen(kw_only=True)
class VectorHit:
    claim_id: str
    similarity: float  # cosine similarity in [-1, 1]


class VectorHealth(StrEnum):
    AVAILABLE = "available"
    SUSPECT = "suspect"
    QUARANTINED = "quarantined"
    STOPPED = "stopped"


@runtime_checkable
class VectorStore(Protocol):
    """Exact cosine search over one namespace per agent.

    Every method takes a deadline and a cancellation token; a native call that overruns
    is interrupted and reported as DeadlineExceeded, or the store is quarantined
    (StoreQuarantined) — never a hang (R-VEC-3). An identity differing from the stored
    one raises IdentityMismatch (R-PROV-4).
    """

    async def upsert(
        self, agent_id: str, identity: EmbeddingIdentity, vectors: Mapping[str, Sequence[float]],
        *, deadline: Deadline, cancel: CancellationToken,
    ) -> None:
        """Insert or replace vectors by claim id. NaN, infinite and zero vectors are
        rejected with ValidationError before anything is written."""
        ...

    async def delete(
        self, agent_id: str, claim_ids: Sequence[str], *, deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        """Delete by id; unknown ids are ignored. Returns how many were removed."""
        ...

    async def query(
        self, agent_id: str, identity: EmbeddingIdentity, vector: Sequence[float], top_k: int,
        *, deadline: Deadline, cancel: CancellationToken,
    ) -> Sequence[VectorHit]:
        """The `top_k` most similar ids, similarity descending, ties by claim id ascending."""
        ...

    async def list_ids(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[str]:
        """Every stored claim id of the agent (for coverage checks), ascending."""
        ...

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        """Remove the agent's whole namespace (files included). Idempotent."""
        ...

    def health(self, agent_id: str) -> VectorHealth:
        ...

    async def aclose(self) -> None:
        ...
