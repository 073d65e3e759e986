"""Claim records: what the write path and the management surfaces need to create, change
and read claims by id, slot or page (R-WRITE-4/5, R-LINEAGE-1, R-FORGET-2).

`ClaimReader` is the read-only half (the session runtime reads its working source through
it); `ClaimWriter` holds every write that keeps a row — the supersede/revive rules live in
`memory_core.storage`, the stores execute them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.claims import Claim, ClaimDraft, WriteOrigin
from memory_core.domain.scope import Scope, ScopeFilter

__all__ = [
    "ClaimReader",
    "ClaimWriter",
    "InsertOutcome",
    "InsertStatus",
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


@runtime_checkable
class ClaimReader(Protocol):
    """Claims by id, by slot and by page; never internal rows in a listing."""

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

    def find_live_by_slot(self, agent_id: str, scope: Scope, slot: str) -> Claim | None:
        """The owner's recallable claim holding `slot` in exactly `scope` (never a wider or
        narrower one, R-SCOPE-3), or None. When several hold it (written around the
        decision step), the newest: created_at DESC, id DESC. None for another owner and
        while a clear is pending. ValidationError('slot', …) for an empty slot. Served by
        an index: the cost does not grow with the owner's claim count."""
        ...


@runtime_checkable
class ClaimWriter(Protocol):
    """Every claim write that keeps the row: insert, edit, supersede, archive, restore."""

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

    def archive(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        """Recoverable forget (R-FORGET-2): lifecycle archived, revision+1; recall and the
        FTS mirror lose it. Idempotent. Refuses internal rows."""
        ...

    def restore(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        """Archived → active, revision+1, embedding reset to pending. Idempotent for a row
        that is not archived. Refuses internal rows."""
        ...
