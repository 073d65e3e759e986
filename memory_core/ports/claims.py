"""The claim-store port: the single source of truth for claims, directives, tombstones,
lineage, dirty work and clear jobs (SPEC §3, §8).

Semantics every implementation honours (the `ClaimStoreContract` checks them):
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

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.claims import Claim, ClaimDraft, EmbeddingIdentity, WriteOrigin
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus

# Re-exported: the error lives in the domain's hierarchy now; old imports keep working.
from memory_core.domain.errors import DirectiveCapacityExceeded
from memory_core.domain.scope import Scope, ScopeFilter

__all__ = [
    "ClaimStore",
    "ClearPhase",
    "ClearProgress",
    "DeleteOutcome",
    "Derivation",
    "DerivationKind",
    "DirectiveCapacityExceeded",
    "FtsHit",
    "InsertOutcome",
    "InsertStatus",
    "MatchMode",
    "RepairReport",
]


class InsertStatus(StrEnum):
    INSERTED = "inserted"
    DUPLICATE = "duplicate"  # the same provenance key is already stored for this owner
    SUPPRESSED = "suppressed"  # a tombstone matched; nothing was stored
    REVIVED = "revived"  # supersede only: the draft's retired row is live again (R-LINEAGE-1)


@attrs.frozen(kw_only=True)
class InsertOutcome:
    status: InsertStatus
    claim: Claim | None = None  # the new row, the existing duplicate, or the revived row
    released_tombstones: int = 0  # > 0 only for a user add re-authorising forgotten text


class MatchMode(StrEnum):
    ANY = "any"  # OR of terms (recall)
    ALL = "all"  # AND of terms (management search)


@attrs.frozen(kw_only=True)
class FtsHit:
    claim_id: str
    # bm25: lower is better; hits come ordered best first, equal ranks by importance DESC,
    # created_at DESC, id. Hits of the short-term (<3 code points) fallback carry 0.0 and
    # follow every lexical hit.
    rank: float


@attrs.frozen(kw_only=True)
class DeleteOutcome:
    claim_id: str
    tombstones_written: int


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
class ClaimStore(Protocol):
    # --- claims -------------------------------------------------------------------------
    def insert(self, draft: ClaimDraft, *, origin: WriteOrigin, now: datetime) -> InsertOutcome:
        """Store `draft` unless its scoped provenance key is already stored for the owner, in
        any lifecycle (DUPLICATE, the stored row returned — an archived or superseded text is
        not re-absorbed), or a tombstone of its provenance or content exists (SUPPRESSED).
        A USER_ADD origin releases matching tombstones and inserts, atomically; no other
        origin ever does (R-WRITE-5). ClearInProgress while the owner has a clear job;
        SecretRejected when the policy refuses the text."""
        ...

    def insert_many(
        self, drafts: Sequence[ClaimDraft], *, origin: WriteOrigin, now: datetime
    ) -> Sequence[InsertOutcome]:
        """`insert` for each draft, in order, in ONE transaction (an extraction chunk commits
        its claims together). A later draft that repeats an earlier one is DUPLICATE. Any
        error other than suppression/duplication rolls the whole batch back."""
        ...

    def get(self, agent_id: str, claim_id: str) -> Claim:
        """The row, whatever its lifecycle; NotFound for unknown or foreign ids, and for
        every id while a clear is pending."""
        ...

    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        """Claims (never internal rows) ordered by created_at DESC, id DESC, keyset-paged by
        `after_id`. `scope_filter=None` lists every scope (management); a filter narrows.
        `include_inactive` adds archived, conflicted and superseded rows."""
        ...

    def update_content(
        self,
        agent_id: str,
        claim_id: str,
        *,
        expected_revision: int,
        content: str,
        now: datetime,
    ) -> Claim:
        """Manual edit: CAS on revision (RevisionConflict on loss). Same provenance: in
        place, revision+1, embedding reset to pending. New provenance: a new row (or the
        owner's live row of that provenance) supersedes the old one with a `manual_edit`
        lineage edge; the user's edit re-authorises its text like USER_ADD. Returns the
        resulting claim. Refuses internal rows (ValidationError)."""
        ...

    def supersede(
        self,
        agent_id: str,
        old_id: str,
        draft: ClaimDraft,
        *,
        expected_revision: int,
        now: datetime,
        origin: WriteOrigin = WriteOrigin.EXTRACTION,
    ) -> InsertOutcome:
        """Retire `old_id` in favour of `draft`, in one transaction with its `supersede`
        lineage edge `old → successor` (R-LINEAGE-1). Same owner and scope only
        (ValidationError / ScopeError); CAS on the old revision, and an already superseded
        claim is a RevisionConflict.

        The successor, by what the draft's scoped provenance key finds:
        - nothing: the draft is inserted (INSERTED) — unless a tombstone matches
          (SUPPRESSED: nothing changes; a USER_ADD origin releases it, as in `insert`);
        - a live row: that row (DUPLICATE);
        - a retired row — active but superseded, the user returning to an earlier value
          (Paris → Berlin → Paris): that row is revived (REVIVED): `superseded_by` cleared,
          revision+1, embedding reset to pending, and its interval re-opened — it takes
          the draft's temporal metadata when the draft is dated, and an atemporal draft
          re-opens a `state` from `now` with no end. Tombstones are checked as for an
          insert (a match is SUPPRESSED and nothing changes). Only `old` is retired; the
          revived row's earlier edges stay, so lineage reads both ways;
        - any other row — archived (a recoverable forget, R-FORGET-2) or conflicted:
          nothing changes (extraction never undoes the user's forget) and that row is
          returned as DUPLICATE, not recallable, so the caller sees `old` was kept.

        Retiring `old` bumps its revision and, when it is a `state` still holding at the
        closing instant, ends its interval there: at the draft's `valid_from` when the
        draft has one later than the old `valid_from` (a move dated last week ends the old
        home last week, a planned move ends it on the day), else at `now`. An interval that
        already ended before that instant, or starts at or after it, is left alone."""
        ...

    def find_live_by_slot(self, agent_id: str, scope: Scope, slot: str) -> Claim | None:
        """The owner's recallable claim holding `slot` in exactly `scope` (never a wider or
        narrower one, R-SCOPE-3), or None. When several hold it (written around the
        decision step), the newest: created_at DESC, id DESC. None for another owner and
        while a clear is pending. ValidationError('slot', …) for an empty slot. Served by
        an index: the cost does not grow with the owner's claim count."""
        ...

    def archive(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        """Recoverable forget (R-FORGET-2): lifecycle archived, revision+1; recall and the
        FTS mirror lose it. Idempotent. Refuses internal rows."""
        ...

    def restore(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        """Archived → active, revision+1, embedding reset to pending. Idempotent for a row
        that is not archived. Refuses internal rows."""
        ...

    def delete(self, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
        """Selective delete (R-FORGET-1): provenance + content tombstones and the delete in
        one transaction; FTS in step. Refuses internal rows. Vector cleanup is the caller's."""
        ...

    # --- retrieval ----------------------------------------------------------------------
    def search_fts(
        self,
        agent_id: str,
        terms: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        limit: int,
        match_mode: MatchMode = MatchMode.ANY,
    ) -> Sequence[FtsHit]:
        """Recallable rows of this owner and scope matching the terms, best first. The owner
        and scope predicates apply before LIMIT (R-READ-3). Raises StoreError only for
        storage faults; an empty or unmatched query returns []."""
        ...

    def list_applicable_by_ids(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        embedding: EmbeddingIdentity | None = None,
        revisions: Mapping[str, int] | None = None,
    ) -> Sequence[Claim]:
        """Authoritative re-validation (R-READ-3): the subset of ids that are this owner's,
        in scope, recallable, not fenced by a clear, — when `embedding` is given — ready with
        that identity, and — when `revisions` names an id — still at that revision (a vector
        embedded from an older text is not evidence for the new one). Unknown ids are
        dropped silently. Order follows `claim_ids`, duplicates removed."""
        ...

    def record_access(self, agent_id: str, claim_ids: Sequence[str], *, now: datetime) -> int:
        """Bump access counters of the owner's recallable rows (each id once; no revision
        change); returns how many rows changed. A no-op (0) under a clear job."""
        ...

    # --- embeddings ---------------------------------------------------------------------
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

    # --- directives (R-DIR-*) -----------------------------------------------------------
    def create_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive:
        """Explicit user create: active at once; upserts by identity (an existing row of the
        same identity is updated and re-activated, whatever its status). Raises
        DirectiveCapacityExceeded when 64 are already active, ValidationError('topic', …)
        for a missing, stray or over-broad topic (R-DIR-2). Content and topic pass the
        secret policy."""
        ...

    def suggest_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive | None:
        """Derived suggestion: a draft, inserted only if its identity is absent (a rejected
        suggestion stays rejected). Returns None when it already existed."""
        ...

    def set_directive_status(
        self, agent_id: str, directive_id: str, status: DirectiveStatus, *, now: datetime
    ) -> Directive:
        """Approve (draft→active, capacity-checked) or reject (draft→rejected); any other
        transition raises ValidationError('status', …). NotFound for unknown/foreign ids."""
        ...

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        """Ordered updated_at DESC, id ASC (R-DIR-3). Directives survive a clear and are
        readable while one is pending."""
        ...

    # --- clear, retirement, lineage, repair ---------------------------------------------
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

    def pending_clears(self) -> Sequence[ClearProgress]:
        """Every persisted job, oldest first (startup resumes them one agent at a time)."""
        ...

    def retire_agent(self, agent_id: str) -> None:
        """Delete the whole namespace in one transaction: claims, directives, tombstones,
        lineage, dirty state, clear job and audit rows (R-FORGET-4). The vector file is the
        caller's."""
        ...

    def list_derivations(self, agent_id: str, claim_id: str) -> Sequence[Derivation]:
        """Edges where `claim_id` is parent or child, oldest first. Lineage outlives its
        endpoints (no foreign keys), so ids of deleted claims may appear."""
        ...

    def prune_audit(self, *, older_than: datetime) -> int:
        """Operational retention: drop housekeeping audit events older than `older_than`.
        Never touches lineage or user-visible events. Returns the number removed."""
        ...

    def repair(self, *, now: datetime) -> RepairReport:
        """Startup repair of temporal and scope metadata (R-TIME-4, R-SCOPE-4), in one
        transaction: corrupt temporal fields are normalised and the claim archived
        (persona/working: normalised to atemporal); scope pairs are repaired without ever
        widening, and unrecoverable narrow rows deleted (tombstoned and counted when a
        pending clear covers them); lineage self-edges are dropped; the FTS mirror is
        rebuilt when anything changed. A valid row is never altered."""
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

    def close(self) -> None:
        """Release the store (a file-backed one checkpoints first). Idempotent; any later
        call raises StoreError."""
        ...
