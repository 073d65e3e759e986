"""Embedding bookkeeping: the per-claim embedding state the vector index drives (R-WRITE-6,
R-VEC-4, R-PROV-4). The state is bookkeeping: no call here changes a revision."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.claims import Claim, EmbeddingIdentity
from memory_core.domain.errors import ValidationError

__all__ = [
    "EmbeddingBookkeeping",
    "EmbeddingMark",
]


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

    def list_pending_embeddings(self, agent_id: str, *, limit: int) -> Sequence[Claim]:
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
