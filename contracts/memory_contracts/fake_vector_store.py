"""`InMemoryVectorStore`: a pure-python VectorStore for service tests.

Deterministic, exact (double-precision cosine over unit vectors), no I/O and no threads; it
passes the same `VectorStoreContract` as the DuckDB adapter. Namespaces live in a `backing`
dict that outlives the store object, so a second store over the same backing behaves like a
reopened file (certificates do not survive the reopen, as with a real store).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import IdentityMismatch, StoreError, ValidationError
from memory_core.ports.vectors import (
    ReadyCertificate,
    VectorHealth,
    VectorHit,
    VectorStoreCold,
    WarmReport,
)

__all__ = ["InMemoryVectorStore", "Namespace"]

Vector = tuple[float, ...]


@attrs.define
class Namespace:
    """One agent's vectors (stored unit length) and the identity they were made with."""

    identity: EmbeddingIdentity
    vectors: dict[str, Vector] = attrs.field(factory=dict)


class InMemoryVectorStore:
    """The VectorStore port over plain dicts."""

    def __init__(self, backing: dict[str, Namespace] | None = None) -> None:
        self._backing: dict[str, Namespace] = {} if backing is None else backing
        self._generations: dict[str, int] = {}
        self._certificates: dict[str, ReadyCertificate] = {}
        self._closed = False

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
        self._enter(agent_id, deadline, cancel, "warm")
        wanted = _id_set(authoritative_ids, "authoritative_ids")
        namespace = self._namespace(agent_id, identity)
        orphans = [claim_id for claim_id in namespace.vectors if claim_id not in wanted]
        for claim_id in orphans:
            del namespace.vectors[claim_id]
        certificate = ReadyCertificate(
            agent_id=agent_id,
            identity=identity,
            store_generation=self._generation(agent_id),
            config_generation=config_generation,
        )
        self._certificates[agent_id] = certificate
        return WarmReport(
            certificate=certificate,
            missing_ids=tuple(sorted(wanted - namespace.vectors.keys())),
            orphans_deleted=len(orphans),
            vector_count=len(namespace.vectors),
        )

    async def upsert(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        vectors: Mapping[str, Sequence[float]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        self._enter(agent_id, deadline, cancel, "upsert")
        checked = {}
        for claim_id, vector in vectors.items():
            if not isinstance(claim_id, str) or not claim_id:
                raise ValidationError("vectors", "claim ids must be non-empty strings")
            checked[claim_id] = _unit(vector, identity.dim, f"vectors[{claim_id!r}]")
        if not checked:
            return
        self._namespace(agent_id, identity).vectors.update(checked)

    async def delete(
        self,
        agent_id: str,
        claim_ids: Collection[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        self._enter(agent_id, deadline, cancel, "delete")
        namespace = self._backing.get(agent_id)
        if namespace is None:
            return 0
        removed = 0
        for claim_id in _id_set(claim_ids, "claim_ids"):
            if namespace.vectors.pop(claim_id, None) is not None:
                removed += 1
        return removed

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
        (answer,) = await self.query_batch(
            agent_id, certificate, [vector], top_k, deadline=deadline, cancel=cancel
        )
        return answer

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
        namespace = self._certified(agent_id, certificate)
        self._enter(agent_id, deadline, cancel, "query")
        _check_top_k(top_k)
        dim = certificate.identity.dim
        queries = [_unit(vector, dim, f"vectors[{i}]") for i, vector in enumerate(vectors)]
        return [_rank(namespace, query, top_k, None) for query in queries]

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
        namespace = self._certified(agent_id, certificate)
        self._enter(agent_id, deadline, cancel, "query_by_id")
        _check_top_k(top_k)
        query = namespace.vectors.get(claim_id)
        return [] if query is None else _rank(namespace, query, top_k, claim_id)

    async def list_ids(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[str]:
        self._enter(agent_id, deadline, cancel, "list_ids")
        namespace = self._backing.get(agent_id)
        return [] if namespace is None else sorted(namespace.vectors)

    async def stored_identity(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> EmbeddingIdentity | None:
        self._enter(agent_id, deadline, cancel, "stored_identity")
        namespace = self._backing.get(agent_id)
        return None if namespace is None else namespace.identity

    async def rebuild(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        self._enter(agent_id, deadline, cancel, "rebuild")
        self._backing[agent_id] = Namespace(identity=identity)
        self._invalidate(agent_id)

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        self._enter(agent_id, deadline, cancel, "drop_agent")
        self._backing.pop(agent_id, None)
        self._invalidate(agent_id)

    def health(self, agent_id: str) -> VectorHealth:
        return VectorHealth.STOPPED if self._closed else VectorHealth.AVAILABLE

    async def aclose(self) -> None:
        self._closed = True
        self._certificates.clear()

    # --- internals --------------------------------------------------------------------

    def _enter(
        self, agent_id: str, deadline: Deadline, cancel: CancellationToken, what: str
    ) -> None:
        if self._closed:
            raise StoreError("vector store is closed")
        if not isinstance(agent_id, str) or not agent_id:
            raise ValidationError("agent_id", "must be a non-empty string")
        cancel.raise_if_cancelled()
        deadline.raise_if_expired(f"vector store {what}")

    def _namespace(self, agent_id: str, identity: EmbeddingIdentity) -> Namespace:
        namespace = self._backing.get(agent_id)
        if namespace is None:
            namespace = self._backing[agent_id] = Namespace(identity=identity)
        if namespace.identity != identity:
            raise IdentityMismatch(
                f"vector store of agent {agent_id!r} holds another embedding identity"
            )
        return namespace

    def _generation(self, agent_id: str) -> int:
        return self._generations.setdefault(agent_id, 1)

    def _invalidate(self, agent_id: str) -> None:
        self._generations[agent_id] = self._generation(agent_id) + 1
        self._certificates.pop(agent_id, None)

    def _certified(self, agent_id: str, certificate: ReadyCertificate) -> Namespace:
        if self._closed:
            raise StoreError("vector store is closed")
        namespace = self._backing.get(agent_id)
        if namespace is None or self._certificates.get(agent_id) != certificate:
            raise VectorStoreCold(f"vector store of agent {agent_id!r} has no ready certificate")
        return namespace


def _unit(vector: Sequence[float], dim: int, field: str) -> Vector:
    if isinstance(vector, str | bytes):
        raise ValidationError(field, "must be a sequence of numbers")
    try:
        values = list(vector)
    except TypeError:
        raise ValidationError(field, "must be a sequence of numbers") from None
    if not values:
        raise ValidationError(field, "must not be empty")
    if len(values) != dim:
        raise ValidationError(field, f"has dimension {len(values)}, expected {dim}")
    floats = []
    for value in values:
        # Real numbers only (numpy scalars convert through __float__); not bools or text.
        if isinstance(value, bool | str | bytes | complex) or not hasattr(value, "__float__"):
            raise ValidationError(field, "must be a sequence of numbers")
        number = float(value)
        if not math.isfinite(number):
            raise ValidationError(field, "must contain only finite numbers")
        floats.append(number)
    largest = max(abs(x) for x in floats)
    if largest == 0.0:
        raise ValidationError(field, "must not be a zero vector")
    # Scaled first, so huge or tiny components neither overflow nor underflow the norm.
    scaled = [x / largest for x in floats]
    norm = math.sqrt(math.fsum(x * x for x in scaled))
    return tuple(x / norm for x in scaled)


def _rank(namespace: Namespace, query: Vector, top_k: int, exclude: str | None) -> list[VectorHit]:
    scored = [
        (math.fsum(a * b for a, b in zip(query, vector, strict=True)), claim_id)
        for claim_id, vector in namespace.vectors.items()
        if claim_id != exclude
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [
        VectorHit(claim_id=claim_id, similarity=min(1.0, max(-1.0, score)))
        for score, claim_id in scored[:top_k]
    ]


def _check_top_k(top_k: int) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise ValidationError("top_k", "must be a non-negative integer")


def _id_set(ids: Collection[str], field: str) -> set[str]:
    if isinstance(ids, str):
        raise ValidationError(field, "must be a collection of claim ids, not one string")
    wanted = set(ids)
    if any(not isinstance(claim_id, str) or not claim_id for claim_id in wanted):
        raise ValidationError(field, "claim ids must be non-empty strings")
    return wanted
