"""`FakeClaimRecords`: the `ClaimReader` and `ClaimWriter` roles in memory. It executes the
rules of `memory_core.storage` — draft preparation, the insert decision, supersede's checks
and successor, interval close and reopen — in the SQL stores' order, so both raise the same
error first. Each call is one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial

import attrs

from memory_contracts.fake_claim_table import ClaimTable, FakeStoreBase
from memory_contracts.fake_conflicts import settle_removed
from memory_core.domain.claims import Claim, ClaimDraft, EmbeddingState, Lifecycle, WriteOrigin
from memory_core.domain.errors import ClearInProgress, NotFound, ScopeError, ValidationError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.ports.claims import DerivationKind, InsertOutcome
from memory_core.ports.claims import InsertStatus as Status
from memory_core.storage.admission import (
    admit,
    probed_identities,
    require_generic_kind,
    tombstone_verdict,
)
from memory_core.storage.conflicts import Removal
from memory_core.storage.drafts import PreparedDraft, draft_of, prepare, stored_time
from memory_core.storage.intervals import closed_valid_until, closing_instant, reopened_temporal
from memory_core.storage.succession import (
    Successor,
    check_revision,
    check_supersede,
    decide_successor,
)

__all__ = ["FakeClaimRecords"]

_PENDING = {"embedding_state": EmbeddingState.PENDING, "embedding": None}
_COPIED = ("agent_id", "kind", "category", "confidence", "scope", "source", "slot")


class FakeClaimRecords(FakeStoreBase):
    def get(self, agent_id: str, claim_id: str) -> Claim:
        claim = self._open().find(agent_id, claim_id)
        if claim is None:
            raise NotFound(f"no claim {claim_id} for this agent")
        return claim

    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        table = self._open()
        rows = table.visible(agent_id, recallable=not include_inactive, scope_filter=scope_filter)
        rows = [claim for claim in rows if not claim.kind.is_internal]
        if after_id is not None:
            cursor = table.find(agent_id, after_id)
            if cursor is None:
                return []  # an unknown cursor yields an empty page, as in SQL
            rows = [c for c in rows if (c.created_at, c.id) < (cursor.created_at, cursor.id)]
        return sorted(rows, key=lambda c: (c.created_at, c.id), reverse=True)[: max(limit, 0)]

    def find_live_by_slot(self, agent_id: str, scope: Scope, slot: str) -> Claim | None:
        if not isinstance(scope, Scope):
            raise ScopeError("scope", "must be a Scope")
        if not isinstance(slot, str) or not slot.strip():
            raise ValidationError("slot", "must be a non-empty slot key")
        rows = self._open().visible(agent_id, recallable=True)
        holders = [claim for claim in rows if (claim.scope, claim.slot) == (scope, slot)]
        return max(holders, key=lambda c: (c.created_at, c.id), default=None)

    def insert(self, draft: ClaimDraft, *, origin: WriteOrigin, now: datetime) -> InsertOutcome:
        return self.insert_many([draft], origin=origin, now=now)[0]

    def insert_many(
        self, drafts: Sequence[ClaimDraft], *, origin: WriteOrigin, now: datetime
    ) -> Sequence[InsertOutcome]:
        at, origin = stored_time(now, "now"), WriteOrigin(origin)
        for draft in drafts:
            require_generic_kind(draft.kind, origin)
        with self._open().transaction() as table:
            # The secret policy runs over the whole batch before anything is written.
            prepared = [prepare(draft, self._policy) for draft in drafts]
            return [self._insert(table, item, origin, at) for item in prepared]

    def _insert(
        self, table: ClaimTable, prepared: PreparedDraft, origin: WriteOrigin, now: datetime
    ) -> InsertOutcome:
        draft, agent_id = prepared.draft, prepared.draft.agent_id
        if agent_id in table.jobs:
            raise ClearInProgress("a clear job is pending for this agent")
        existing = table.by_key(agent_id, prepared.key)
        identities = probed_identities(prepared.identities, origin)
        tombstoned = partial(table.tombstoned, agent_id, identities)  # asked if new
        admission = admit(duplicate=existing is not None, tombstoned=tombstoned, origin=origin)
        if not admission.writes:  # DUPLICATE and SUPPRESSED are insert statuses too
            return InsertOutcome(status=Status(admission.value), claim=existing)
        released = table.release(agent_id, identities, admission)
        internal = draft.kind.is_internal
        claim = Claim(
            id=self._new_id("mem"),
            content=prepared.content,
            canonical_content=prepared.canonical,
            importance=float(draft.effective_importance),
            temporal=prepared.temporal,
            provenance_key=prepared.key,
            embedding_state=EmbeddingState.NOT_APPLICABLE if internal else EmbeddingState.PENDING,
            created_at=now,
            updated_at=now,
            **{name: getattr(draft, name) for name in _COPIED},
        )
        table.put(claim)
        return InsertOutcome(status=Status.INSERTED, claim=claim, released_tombstones=released)

    def update_content(
        self, agent_id: str, claim_id: str, *, expected_revision: int, content: str, now: datetime
    ) -> Claim:
        at = stored_time(now, "now")
        with self._open().transaction() as table:
            claim = table.owned(agent_id, claim_id)
            check_revision(claim.id, claim.revision, expected_revision)
            prepared = prepare(draft_of(claim, content=content), self._policy)
            if prepared.key == claim.provenance_key:
                text = {"content": prepared.content, "canonical_content": prepared.canonical}
                return table.bump(claim, at, **text, **_PENDING)
            # The user typed this text: the edit re-authorises it like an explicit add.
            successor = self._insert(table, prepared, WriteOrigin.USER_ADD, at).claim
            assert successor is not None
            self._retire(table, claim, successor.id, at, at)
            table.derive(claim, successor.id, DerivationKind.MANUAL_EDIT, at)  # same transaction
            return table.rows[successor.id]

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
        at, origin = stored_time(now, "now"), WriteOrigin(origin)
        with self._open().transaction() as table:
            if draft.agent_id != agent_id:
                raise ValidationError("draft.agent_id", "must be the owner of the superseded claim")
            prepared = prepare(draft, self._policy)
            old = table.owned(agent_id, old_id)
            check_supersede(old, draft, expected_revision=expected_revision)
            existing = table.by_key(agent_id, prepared.key)
            decision = decide_successor(old.id, existing)
            if decision.action is Successor.INSERT:
                outcome = self._insert(table, prepared, origin, at)
            elif decision.action is Successor.REVIVE and existing is not None:
                outcome = self._revive(table, existing, prepared, origin, at)
            else:
                outcome = InsertOutcome(status=Status.DUPLICATE, claim=existing)
            if decision.retire_old and outcome.claim is not None and outcome.claim.id != old.id:
                ends = closing_instant(old.temporal, prepared.temporal, at)
                self._retire(table, old, outcome.claim.id, ends, at)
                table.derive(old, outcome.claim.id, DerivationKind.SUPERSEDE, at)  # R-LINEAGE-1
            return outcome

    @staticmethod
    def _retire(table: ClaimTable, old: Claim, by: str, ends: datetime, now: datetime) -> None:
        """Point `old` at its successor `by`; a state still holding at `ends` ends there.
        A challenge `old` takes part in is settled first (`storage.conflicts`)."""
        settle_removed(table, old.agent_id, old.id, Removal.RETIRE, now)
        old = table.rows[old.id]
        until = closed_valid_until(old.temporal, ends)
        interval = attrs.evolve(old.temporal.interval, valid_until=until)
        table.bump(
            old, now, superseded_by=by, temporal=attrs.evolve(old.temporal, interval=interval)
        )

    @staticmethod
    def _revive(
        table: ClaimTable, claim: Claim, prepared: PreparedDraft, origin: WriteOrigin, now: datetime
    ) -> InsertOutcome:
        """A retired row live again, under the insert's tombstone rule; it is re-embedded."""
        identities = probed_identities(prepared.identities, origin)
        tombstoned = table.tombstoned(claim.agent_id, identities)
        verdict = tombstone_verdict(tombstoned=tombstoned, origin=origin)
        if not verdict.writes:
            return InsertOutcome(status=Status.SUPPRESSED)
        released = table.release(claim.agent_id, identities, verdict)
        temporal = reopened_temporal(claim.temporal, prepared.temporal, now)
        revived = table.bump(claim, now, superseded_by=None, temporal=temporal, **_PENDING)
        return InsertOutcome(status=Status.REVIVED, claim=revived, released_tombstones=released)

    def archive(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        return self._move(agent_id, claim_id, Lifecycle.ARCHIVED, now)

    def restore(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        """Back to active and re-embedded, as its vector may be gone."""
        return self._move(agent_id, claim_id, Lifecycle.ACTIVE, now, **_PENDING)

    def _move(
        self, agent_id: str, claim_id: str, to: Lifecycle, now: datetime, **changes: object
    ) -> Claim:
        with self._open().transaction() as table:
            claim = table.owned(agent_id, claim_id)
            # Idempotent, and only archived ↔ active: restoring a conflicted row is a no-op.
            if claim.lifecycle is to or Lifecycle.ARCHIVED not in (claim.lifecycle, to):
                return claim
            at = stored_time(now, "now")
            if to is Lifecycle.ARCHIVED:
                settle_removed(table, agent_id, claim_id, Removal.RETIRE, at)
                claim = table.rows[claim_id]
            return table.bump(claim, stored_time(now, "now"), lifecycle=to, **changes)
