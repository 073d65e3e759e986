"""The vector-store port: a per-agent sidecar of embeddings, never an authority.

A vector hit proves nothing about authorisation; every candidate is re-validated against
the claim store before ranking (R-READ-3). The store scans exactly (R-VEC-1).

Life of an agent's namespace, as the services drive it:

1. `warm(agent, identity, authoritative_ready_ids, config_generation=…)` opens (creating,
   migrating or recovering as needed), verifies coverage against the claim store's ready ids
   — vectors without a ready claim are orphans and are deleted (so vectors of claims cleared
   before a restart never reach recall, R-VEC-4); ready claims without a vector are reported
   for re-embedding — and grants a `ReadyCertificate`.
2. `query` / `query_batch` / `query_by_id` answer only for the current certificate; without
   one they raise `VectorStoreCold`, which the read path records as `vectorCold` and serves
   from FTS alone.
3. `upsert` / `delete` keep the namespace in step with the claim store; the certificate stays
   valid across them.
4. An identity that differs from the stored one raises `IdentityMismatch` (R-PROV-4);
   `rebuild` publishes a fresh, empty namespace for the new identity, after which every
   ready claim is re-embedded. Vectors of two identities are never mixed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import StoreError

__all__ = [
    "ReadyCertificate",
    "VectorHealth",
    "VectorHit",
    "VectorStore",
    "VectorStoreCold",
    "WarmReport",
]


@attrs.frozen(kw_only=True)
class VectorHit:
    claim_id: str
    similarity: float  # cosine similarity in [-1, 1]


class VectorHealth(StrEnum):
    AVAILABLE = "available"
    SUSPECT = "suspect"  # the last native call overran its deadline but settled
    QUARANTINED = "quarantined"  # closed for this process; the next process recovers it
    STOPPED = "stopped"  # the store was closed


@attrs.frozen(kw_only=True)
class ReadyCertificate:
    """Proof that an agent's namespace was warmed for `identity` (R-VEC-4).

    Valid while the store's generation for the agent is unchanged (a rebuild, drop,
    quarantine, close or reopen moves it on) and until the next `warm` of the agent. The
    caller also compares `config_generation` with its own current configuration generation
    and stops presenting a certificate from an older one.
    """

    agent_id: str
    identity: EmbeddingIdentity
    store_generation: int
    config_generation: int


@attrs.frozen(kw_only=True)
class WarmReport:
    """What a warm-up found: the certificate, and the coverage repair it implies."""

    certificate: ReadyCertificate
    missing_ids: tuple[str, ...]  # ready claims without a usable vector: re-embed them, ascending
    orphans_deleted: int  # stored vectors with no ready claim (or unusable values), now deleted
    vector_count: int  # vectors resident after the warm-up


class VectorStoreCold(StoreError):
    """The agent's namespace has no valid ready certificate: vector recall is unavailable
    until the next successful `warm` (the read path records `vectorCold`)."""


@runtime_checkable
class VectorStore(Protocol):
    """Exact cosine search over one namespace per agent.

    Every method that may wait takes a deadline and a cancellation token. An already
    expired deadline raises DeadlineExceeded and an already cancelled token raises
    OperationCancelled, before any work. A native call that overruns is interrupted and
    reported as DeadlineExceeded (or OperationCancelled); one that cannot be stopped
    quarantines the agent's namespace (StoreQuarantined) — never a hang (R-VEC-3). Other
    store failures raise StoreError. Vectors with zero length, the wrong dimension, NaN or
    infinite components, or zero norm raise ValidationError before anything is written or
    scanned. Agents never see each other's vectors (R-PRIV-2).
    """

    async def warm(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        authoritative_ids: Collection[str],
        *,
        config_generation: int,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> WarmReport:
        """Open the namespace for `identity` (creating an empty one if there is none), check
        coverage against `authoritative_ids` — the ready claim ids of this identity, read while
        no embedding write for the agent is in flight — delete orphans, and grant a
        certificate that replaces any earlier one. IdentityMismatch if the stored identity
        differs."""
        ...

    async def upsert(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        vectors: Mapping[str, Sequence[float]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        """Insert or replace vectors by claim id, all or nothing, creating the namespace for
        `identity` if there is none. IdentityMismatch if the stored identity differs."""
        ...

    async def delete(
        self,
        agent_id: str,
        claim_ids: Collection[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        """Delete by id; unknown ids are ignored. Returns how many were removed."""
        ...

    async def query(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        vector: Sequence[float],
        top_k: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[VectorHit]:
        """The `top_k` most similar ids, similarity descending, ties by claim id ascending.
        VectorStoreCold unless `certificate` is the agent's current one."""
        ...

    async def query_batch(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        vectors: Sequence[Sequence[float]],
        top_k: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[VectorHit]]:
        """`query` for several vectors in one scan; one answer per vector, in input order."""
        ...

    async def query_by_id(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        claim_id: str,
        top_k: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[VectorHit]:
        """Neighbours of a stored vector, itself excluded, ordered as `query`; empty when the
        id has no vector."""
        ...

    async def list_ids(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[str]:
        """Every stored claim id of the agent (for coverage checks), ascending."""
        ...

    async def stored_identity(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> EmbeddingIdentity | None:
        """The identity the agent's namespace was created for; None when there is none."""
        ...

    async def rebuild(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        """Replace the namespace with a fresh, empty one for `identity` (the reindex path
        after an identity change). The old certificate becomes invalid."""
        ...

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        """Remove the agent's whole namespace (files included). Idempotent."""
        ...

    def health(self, agent_id: str) -> VectorHealth: ...

    async def aclose(self) -> None:
        """Close every namespace; later calls raise StoreError. Idempotent."""
        ...
