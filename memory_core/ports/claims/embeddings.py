"""Embedding bookkeeping: the per-claim embedding state the vector index drives (R-WRITE-6,
R-VEC-4, R-PROV-4), and the durable vector-cleanup queue (R-FORGET-1). The state is
bookkeeping: no call here changes a revision.

The cleanup queue closes every interleaving of forgetting with an embedding in flight: a
row, written before a vector may exist that must not outlive its claim, says "this claim's
vector goes unless the claim is READY". Ids only, never content. Each path finishes the rows
of its own source once the vector's fate is settled; what a failure, a cut deadline or a
kill leaves is finished by the next pass (the agent's next drain or warm-up, or the start-up
sweep), and doctor counts it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.claims import Claim, EmbeddingIdentity
from memory_core.domain.errors import ValidationError

__all__ = [
    "WHOLE_NAMESPACE",
    "CleanupSource",
    "EmbeddingBookkeeping",
    "EmbeddingMark",
    "PendingEmbedding",
    "VectorCleanup",
]

# The claim id of a `CleanupSource.NAMESPACE` row: blank, so no claim id can be mistaken for it.
WHOLE_NAMESPACE = ""


class CleanupSource(StrEnum):
    """Who queued a cleanup row; a path finishes only its own (see the module note)."""

    DRAIN = "drain"  # an embedding batch, before it writes the vectors
    FORGET = "forget"  # a delete, archive or supersede, before or as it commits
    NAMESPACE = "namespace"  # a clear or retirement: the agent's whole namespace goes


@attrs.frozen(kw_only=True, slots=True)
class PendingEmbedding:
    """A claim waiting for its embedding, as the drain needs it: the text to embed and the
    revision its mark compares against. Not a whole `Claim`: a drain reads a hundred of
    these per batch, and decoding whole rows was most of that read's cost (issue 15)."""

    id: str
    revision: int
    content: str

    @classmethod
    def of(cls, claim: Claim) -> PendingEmbedding:
        return cls(id=claim.id, revision=claim.revision, content=claim.content)


@attrs.frozen(kw_only=True)
class VectorCleanup:
    """One claim id (or the whole namespace: `WHOLE_NAMESPACE`) still to be cleaned up. `keep`:
    the claim is recallable and READY right now, so its vector is legitimate."""

    agent_id: str
    claim_id: str
    keep: bool


def _identity_if_ready(mark: EmbeddingMark, _: object, identity: EmbeddingIdentity | None) -> None:
    if mark.ready and identity is None:
        raise ValidationError("identity", "required to mark an embedding ready")


@attrs.frozen(kw_only=True)
class EmbeddingMark:
    """One embedding outcome to record: `mark_embedding`'s arguments as a value, so a whole
    drain batch — claims of several agents — is recorded in one transaction."""

    agent_id: str
    claim_id: str
    expected_revision: int
    identity: EmbeddingIdentity | None = attrs.field(validator=_identity_if_ready)
    ready: bool


@runtime_checkable
class EmbeddingBookkeeping(Protocol):
    """What the vector index needs: the queue, the ready set, the CAS mark and resets."""

    def list_pending_embeddings(self, agent_id: str, *, limit: int) -> Sequence[PendingEmbedding]:
        """Recallable rows whose embedding is pending, oldest first (created_at, id)."""
        ...

    def list_ready_ids(self, agent_id: str, identity: EmbeddingIdentity) -> Sequence[str]:
        """Ids of the owner's recallable claims embedded READY with exactly `identity`,
        ascending: what a vector namespace must cover (R-VEC-4). Empty under a clear job."""
        ...

    def reset_embeddings(
        self, agent_id: str, claim_ids: Sequence[str] | None, *, now: datetime
    ) -> int:
        """Set the named recallable claims (all of the owner's when None) back to PENDING
        with no identity, keeping revision and updated_at: their vector is missing or of
        another model. Returns how many rows changed; a no-op under a clear job."""
        ...

    def mark_embedding(
        self,
        agent_id: str,
        claim_id: str,
        *,
        expected_revision: int,
        identity: EmbeddingIdentity | None,
        ready: bool,
        now: datetime,
    ) -> bool:
        """CAS the embedding state on `expected_revision`: `ready=True` stores READY with
        `identity` (required); `ready=False` stores ERROR when an identity is given, else
        FTS_ONLY. The revision does not change. False when the revision moved on, the row is
        gone or internal, or a clear is pending — the caller then deletes the orphan vector."""
        ...

    def mark_embeddings(self, marks: Sequence[EmbeddingMark], *, now: datetime) -> Sequence[bool]:
        """`mark_embedding` for every mark, in ONE transaction: one answer per mark, in order
        (False exactly where `mark_embedding` would have answered False). A drain batch costs
        one commit instead of one per claim (issue 15)."""
        ...

    def queue_vector_cleanup(
        self, agent_id: str, claim_ids: Sequence[str], *, source: CleanupSource
    ) -> None:
        """Durably queue cleanup rows, in one transaction; idempotent per (agent, claim id,
        source). `CleanupSource.NAMESPACE` takes `[WHOLE_NAMESPACE]`. Survives clear and
        retirement: the rows are what finishes their vector phase."""
        ...

    def pending_vector_cleanups(
        self, agent_id: str | None = None, *, limit: int
    ) -> Sequence[VectorCleanup]:
        """Distinct queued (agent, claim id) pairs, of one agent or all, ordered by agent
        then claim id, at most `limit`, each with whether its claim is READY now."""
        ...

    def finish_vector_cleanup(
        self, agent_id: str, claim_ids: Sequence[str], *, source: CleanupSource | None
    ) -> int:
        """Remove the rows of `source` (every source when None) for these ids; how many."""
        ...
