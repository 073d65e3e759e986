"""Forgetting: selective delete, agent clear, retirement and the forensic checkpoint
(R-FORGET-1, R-FORGET-3, R-FORGET-4, R-PRIV-3). Tombstones are this role's internals: no
call returns one, and only hashes are kept.

`ClearStatus` is the read-only half: retrieval asks it why an agent reads nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

__all__ = [
    "ClearPhase",
    "ClearProgress",
    "ClearStatus",
    "DeleteOutcome",
    "Forgetting",
]


@attrs.frozen(kw_only=True)
class DeleteOutcome:
    claim_id: str
    tombstones_written: int


class ClearPhase(StrEnum):
    CLAIMS = "claims"
    VECTORS = "vectors"
    DONE = "done"


@attrs.frozen(kw_only=True)
class ClearProgress:
    agent_id: str
    phase: ClearPhase
    removed_count: int  # rows deleted by the job so far (claims and internal rows)
    batch_removed: int = 0  # rows deleted by the call that returned this progress
    created_at: datetime | None = None  # when the job was persisted; None once DONE


@runtime_checkable
class ClearStatus(Protocol):
    """Which agents a clear job fences right now."""

    def pending_clears(self) -> Sequence[ClearProgress]:
        """Every persisted job, oldest first (startup resumes them one agent at a time)."""
        ...


@runtime_checkable
class Forgetting(ClearStatus, Protocol):
    """Every write that removes content and leaves tombstones (or nothing at all)."""

    def delete(self, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
        """Selective delete (R-FORGET-1): provenance + content tombstones and the delete in
        one transaction; FTS in step. Refuses internal rows. Vector cleanup is the caller's."""
        ...

    def begin_clear(self, agent_id: str, *, now: datetime) -> ClearProgress:
        """Persist a clear job; from here the agent's claims are fenced. Idempotent: an
        existing job is returned as it stands."""
        ...

    def run_clear_batch(self, agent_id: str, *, batch_size: int = 256) -> ClearProgress:
        """Tombstone + delete up to `batch_size` (1..256) rows in one transaction; the batch
        that finds fewer rows than that drops lineage and dirty state and moves the job to
        the vector phase. In the vector phase it is a no-op; NotFound without a job."""
        ...

    def finish_clear(self, agent_id: str) -> None:
        """Remove the job once vector cleanup is done or deferred. ValidationError('phase', …)
        while the claims phase is unfinished; a no-op when there is no job."""
        ...

    def retire_agent(self, agent_id: str) -> None:
        """Delete the whole namespace in one transaction: claims, directives, tombstones,
        lineage, dirty state, clear job and audit rows (R-FORGET-4). The vector file is the
        caller's."""
        ...

    def checkpoint(self) -> None:
        """Make committed forgetting physical (R-PRIV-3): afterwards no file the store
        wrote keeps what a `delete` or a finished clear removed, as far as the engine
        allows without a maintenance window. The caller (the memory service) runs it after
        each delete and clear; it is not meant per turn — it may rewrite an index, with a
        cost proportional to the index (the apsw store: ~0.05 s at 10k claims, 0.4–0.8 s
        at 100k). Idempotent; cheap when nothing changed since the last one. A store
        without a log or index residue implements it as a no-op; one that cannot reach the
        guarantee this way documents what remains (PostgreSQL: docs/scale-out.md).
        StoreError after close."""
        ...
