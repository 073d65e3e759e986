"""The claim-store ports: the single source of truth for claims, directives, tombstones,
lineage and clear jobs (SPEC §3, §8), cut into the roles the services use.

Why this cut — one role per question a service asks, as the tape is four ports:
- `ClaimReader` / `ClaimWriter` (records): the write path and the management surfaces;
  the session runtime only reads its working source, so reading is its own role;
- `ClaimSearch` (search): retrieval's per-turn calls — FTS, re-validation, access counts;
  the calls a networked store must run off the event loop, kept together for that reason;
- `EmbeddingBookkeeping` (embeddings): the vector index's queue and CAS marks;
- `DirectiveReader` / `DirectiveStore` (directives): the trust plane, independent of
  claims (a clear keeps it), so a store may implement it alone;
- `ClearStatus` / `Forgetting` (forgetting): delete, clear, retire, checkpoint — every
  write that leaves tombstones (internal: hashes only, never returned) or nothing;
  retrieval only asks which agents are fenced;
- `LineageReader` (lineage): edges are written by `ClaimWriter` calls, read here;
- `AuditReader` (audit): the audit trail, written inside each mutation, read back;
- `StoreMaintenance` (maintenance): repair, audit retention, close — host lifecycle;
  `Consolidation` (maintenance): the dirty queue, merges and stale archiving of the
  background maintenance service; `Conflicts` (maintenance): challenges kept as records;
  `Personas` (maintenance): self-model drafts the user approves;
- `WorkingProjections` (projection): the stored working projection the turn reads, with
  the per-agent source generation that says whether it still describes the claims.
`ClaimStore` inherits every role: what a full store implements and the composition root
builds once. Each role has its contract in `memory_contracts.claim_store`.

Semantics every implementation honours (the contracts check them):
- every call names its `agent_id`; there is no current agent (R-STORE-3), and another
  agent's id behaves exactly like an unknown id (NotFound / empty), never an error that
  reveals existence (R-PRIV-2);
- each mutating method is one transaction; the tombstone check and the insert are in the
  same one (R-WRITE-4); lineage edges commit with their mutation (R-LINEAGE-1);
- a pending clear job fences the agent: reads return nothing and writes raise
  ClearInProgress until the job finishes (R-FORGET-3);
- content passes the secret policy before it is stored (R-PRIV-1); keys and tombstones are
  computed over the text actually stored;
- persona/working rows are internal: never listed, searched, embedded or tombstoned, and
  refused (ValidationError naming `kind`) by archive/restore/delete/update_content;
- times are aware UTC datetimes; stores may keep millisecond precision only;
- local SQLite waits are bounded by the store's busy timeout, so these methods are
  synchronous; the clear runner yields between batches.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory_core.ports.claims.audit import AuditEvent, AuditReader
from memory_core.ports.claims.directives import (
    DirectiveCapacityExceeded,
    DirectiveReader,
    DirectiveStore,
)
from memory_core.ports.claims.embeddings import (
    WHOLE_NAMESPACE,
    CleanupSource,
    EmbeddingBookkeeping,
    EmbeddingMark,
    PendingEmbedding,
    VectorCleanup,
)
from memory_core.ports.claims.forgetting import (
    ClearPhase,
    ClearProgress,
    ClearStatus,
    DeleteOutcome,
    Forgetting,
)
from memory_core.ports.claims.lineage import Derivation, DerivationKind, LineageReader
from memory_core.ports.claims.maintenance import (
    MAX_DIRTY_BATCH,
    Conflict,
    Conflicts,
    Consolidation,
    DirtySeed,
    MergeRequest,
    Personas,
    PersonaState,
    PersonaVersion,
    PersonaView,
    RepairReport,
    Resolution,
    StoreMaintenance,
)
from memory_core.ports.claims.projection import (
    HiddenClaim,
    ProjectionEntry,
    StoredWorking,
    WorkingProjections,
    WorkingSnapshot,
)
from memory_core.ports.claims.records import (
    ClaimReader,
    ClaimWriter,
    InsertOutcome,
    InsertStatus,
)
from memory_core.ports.claims.search import ClaimSearch, FtsHit, MatchMode

__all__ = [
    "MAX_DIRTY_BATCH",
    "WHOLE_NAMESPACE",
    "AuditEvent",
    "AuditReader",
    "ClaimReader",
    "ClaimSearch",
    "ClaimStore",
    "ClaimWriter",
    "CleanupSource",
    "ClearPhase",
    "ClearProgress",
    "ClearStatus",
    "Conflict",
    "Conflicts",
    "Consolidation",
    "DeleteOutcome",
    "Derivation",
    "DerivationKind",
    "DirectiveCapacityExceeded",
    "DirectiveReader",
    "DirectiveStore",
    "DirtySeed",
    "EmbeddingBookkeeping",
    "EmbeddingMark",
    "Forgetting",
    "FtsHit",
    "HiddenClaim",
    "InsertOutcome",
    "InsertStatus",
    "LineageReader",
    "MatchMode",
    "MergeRequest",
    "PendingEmbedding",
    "PersonaState",
    "PersonaVersion",
    "PersonaView",
    "Personas",
    "ProjectionEntry",
    "RepairReport",
    "Resolution",
    "StoreMaintenance",
    "StoredWorking",
    "VectorCleanup",
    "WorkingProjections",
    "WorkingSnapshot",
]


@runtime_checkable
class ClaimStore(
    ClaimReader,
    ClaimWriter,
    ClaimSearch,
    EmbeddingBookkeeping,
    DirectiveStore,
    Forgetting,
    LineageReader,
    AuditReader,
    StoreMaintenance,
    Consolidation,
    Conflicts,
    Personas,
    WorkingProjections,
    Protocol,
):
    """Every role at once: what a full store implements (SQLite, PostgreSQL, the fake)."""
