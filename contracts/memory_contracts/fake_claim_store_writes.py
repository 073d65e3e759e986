"""Claim writes of `InMemoryClaimStore`: insert with the tombstone check, manual edit,
supersede (reviving a retired row the draft repeats), archive/restore, selective delete and
clear batches.

Each function runs inside the caller's `ClaimTable.transaction()`, so an error anywhere
leaves the table as it was (R-WRITE-4: the tombstone check and the insert are one step).
The rules follow the apsw store's, in the same order, so both raise the same error first.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs

from memory_contracts.fake_claim_store_table import (
    ClaimTable,
    ClearJob,
    PreparedDraft,
    identities_of,
    prepare,
)
from memory_core.domain.claims import (
    Claim,
    ClaimDraft,
    EmbeddingState,
    Lifecycle,
    WriteOrigin,
)
from memory_core.domain.errors import NotFound, RevisionConflict, ScopeError, ValidationError
from memory_core.domain.temporal import Interval, TemporalKind, TemporalMetadata
from memory_core.ports.claims import (
    ClearPhase,
    ClearProgress,
    DeleteOutcome,
    DerivationKind,
    InsertOutcome,
    InsertStatus,
)
from memory_core.ports.secrets import SecretPolicy

__all__ = [
    "MAX_CLEAR_BATCH",
    "archive",
    "begin_clear",
    "delete",
    "finish_clear",
    "insert_prepared",
    "require_owned",
    "restore",
    "run_clear_batch",
    "supersede",
    "update_content",
]

MAX_CLEAR_BATCH = 256


def insert_prepared(
    table: ClaimTable,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now: datetime,
    new_id: Callable[[], str],
) -> InsertOutcome:
    """Duplicate check, tombstone check (and release for a user add), insert (R-WRITE-4/5)."""
    draft = prepared.draft
    agent_id = draft.agent_id
    table.ensure_not_fenced(agent_id)
    existing = table.find_by_key(agent_id, prepared.key)
    if existing is not None:
        return InsertOutcome(status=InsertStatus.DUPLICATE, claim=existing)
    released = 0
    if prepared.identities and table.matching(agent_id, prepared.identities):
        if origin is not WriteOrigin.USER_ADD:
            return InsertOutcome(status=InsertStatus.SUPPRESSED)
        released = table.release(agent_id, prepared.identities)
    claim = Claim(
        id=new_id(),
        agent_id=agent_id,
        kind=draft.kind,
        content=prepared.content,
        canonical_content=prepared.canonical,
        category=draft.category,
        importance=float(draft.effective_importance),
        confidence=None if draft.confidence is None else float(draft.confidence),
        temporal=prepared.temporal,
        scope=draft.scope,
        provenance_key=prepared.key,
        source=draft.source,
        embedding_state=(
            EmbeddingState.NOT_APPLICABLE if draft.kind.is_internal else EmbeddingState.PENDING
        ),
        created_at=now,
        updated_at=now,
        slot=draft.slot,
    )
    table.put(claim)
    return InsertOutcome(status=InsertStatus.INSERTED, claim=claim, released_tombstones=released)


def require_owned(table: ClaimTable, agent_id: str, claim_id: str) -> Claim:
    """The owner's non-internal row for a mutation. ClearInProgress first, so a fenced agent
    learns nothing about its rows; NotFound for unknown and foreign ids alike (R-PRIV-2)."""
    table.ensure_not_fenced(agent_id)
    claim = table.find(agent_id, claim_id)
    if claim is None:
        raise NotFound(f"no claim {claim_id} for this agent")
    if claim.kind.is_internal:
        raise ValidationError(
            "kind", f"{claim.kind.value} rows are internal and managed by projections"
        )
    return claim


def _check_revision(claim: Claim, expected: int) -> None:
    if claim.revision != expected:
        raise RevisionConflict(f"claim {claim.id} is at revision {claim.revision}, not {expected}")


def _closing_instant(old: Claim, prepared: PreparedDraft, now: datetime) -> datetime:
    """When a superseded state stops holding: where its successor starts, if that is known
    and later than the old start; otherwise the moment the change was recorded."""
    start = prepared.temporal.interval.valid_from
    old_start = old.temporal.interval.valid_from
    if start is not None and (old_start is None or start > old_start):
        return start
    return now


def _mark_superseded(
    table: ClaimTable, old: Claim, successor_id: str, *, ends: datetime, now: datetime
) -> None:
    """Point `old` at its successor; a state still holding at `ends` ends there (its
    interval is closed, so evidence retrieval still sees when it was true)."""
    temporal = old.temporal
    interval = temporal.interval
    if (
        temporal.kind is TemporalKind.STATE
        and (interval.valid_until is None or interval.valid_until > ends)
        and (interval.valid_from is None or interval.valid_from < ends)
    ):
        temporal = attrs.evolve(
            temporal, interval=Interval(valid_from=interval.valid_from, valid_until=ends)
        )
    table.put(
        attrs.evolve(
            old,
            superseded_by=successor_id,
            temporal=temporal,
            revision=old.revision + 1,
            updated_at=now,
        )
    )


def _draft_of(claim: Claim, content: str) -> ClaimDraft:
    return ClaimDraft(
        agent_id=claim.agent_id,
        kind=claim.kind,
        content=content,
        category=claim.category,
        importance=claim.importance,
        confidence=claim.confidence,
        temporal=claim.temporal,
        scope=claim.scope,
        source=claim.source,
        slot=claim.slot,
    )


def update_content(
    table: ClaimTable,
    agent_id: str,
    claim_id: str,
    *,
    expected_revision: int,
    content: str,
    policy: SecretPolicy,
    now: datetime,
    new_id: Callable[[], str],
) -> Claim:
    """Manual edit with revision CAS. Same provenance: in place. New provenance: a new row
    (or the live owner of that provenance) supersedes this one, edge `manual_edit`."""
    claim = require_owned(table, agent_id, claim_id)
    _check_revision(claim, expected_revision)
    prepared = prepare(_draft_of(claim, content), policy)
    if prepared.key == claim.provenance_key:
        edited = attrs.evolve(
            claim,
            content=prepared.content,
            canonical_content=prepared.canonical,
            revision=claim.revision + 1,
            updated_at=now,
            embedding_state=EmbeddingState.PENDING,
            embedding=None,
        )
        table.put(edited)
        return edited
    # The user typed this text: their edit re-authorises it like an explicit add.
    outcome = insert_prepared(table, prepared, origin=WriteOrigin.USER_ADD, now=now, new_id=new_id)
    assert outcome.claim is not None
    successor_id = outcome.claim.id
    _mark_superseded(table, claim, successor_id, ends=now, now=now)
    table.add_derivation(
        agent_id, parent=claim.id, child=successor_id, kind=DerivationKind.MANUAL_EDIT, now=now
    )
    successor = table.find(agent_id, successor_id)
    assert successor is not None
    return successor


def supersede(
    table: ClaimTable,
    agent_id: str,
    old_id: str,
    prepared: PreparedDraft,
    *,
    expected_revision: int,
    origin: WriteOrigin,
    now: datetime,
    new_id: Callable[[], str],
) -> InsertOutcome:
    """Insert the successor and retire `old_id` in one transaction (R-LINEAGE-1, R-SCOPE-3)."""
    if prepared.draft.agent_id != agent_id:
        raise ValidationError("draft.agent_id", "must be the owner of the superseded claim")
    old = require_owned(table, agent_id, old_id)
    if old.scope != prepared.draft.scope:
        raise ScopeError("scope", "supersede never crosses scopes")
    _check_revision(old, expected_revision)
    if old.superseded_by is not None:
        raise RevisionConflict(f"claim {old_id} is already superseded")
    existing = table.find_by_key(agent_id, prepared.key)
    if existing is None or existing.id == old.id:
        outcome = insert_prepared(table, prepared, origin=origin, now=now, new_id=new_id)
    elif existing.lifecycle is Lifecycle.ACTIVE and existing.superseded_by is not None:
        outcome = _revive(table, existing, prepared, origin=origin, now=now)
    else:
        outcome = InsertOutcome(status=InsertStatus.DUPLICATE, claim=existing)
        if not existing.is_recallable:
            return outcome  # archived or conflicted: the user's forget is not undone
    if outcome.claim is None or outcome.claim.id == old.id:
        return outcome  # suppressed, or the "successor" is this very claim
    ends = _closing_instant(old, prepared, now)
    _mark_superseded(table, old, outcome.claim.id, ends=ends, now=now)
    table.add_derivation(
        agent_id, parent=old.id, child=outcome.claim.id, kind=DerivationKind.SUPERSEDE, now=now
    )
    return outcome


def _reopened(claim: Claim, incoming: TemporalMetadata, now: datetime) -> TemporalMetadata:
    """A revived row's temporal metadata: the draft's reading when it is dated; else a
    state holds again from now, open-ended, and any other kind keeps what it had."""
    if not incoming.is_atemporal:
        return incoming
    if claim.temporal.kind is TemporalKind.STATE:
        return attrs.evolve(claim.temporal, interval=Interval(valid_from=now))
    return claim.temporal


def _revive(
    table: ClaimTable,
    claim: Claim,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now: datetime,
) -> InsertOutcome:
    """Make a retired row live again under the same tombstone rules as an insert
    (R-WRITE-4/5); it is re-embedded, as its vector may be gone."""
    agent_id = claim.agent_id
    released = 0
    if prepared.identities and table.matching(agent_id, prepared.identities):
        if origin is not WriteOrigin.USER_ADD:
            return InsertOutcome(status=InsertStatus.SUPPRESSED)
        released = table.release(agent_id, prepared.identities)
    revived = attrs.evolve(
        claim,
        superseded_by=None,
        temporal=_reopened(claim, prepared.temporal, now),
        revision=claim.revision + 1,
        updated_at=now,
        embedding_state=EmbeddingState.PENDING,
        embedding=None,
    )
    table.put(revived)
    return InsertOutcome(status=InsertStatus.REVIVED, claim=revived, released_tombstones=released)


def archive(table: ClaimTable, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
    """Recoverable forget: the row stays, recall loses it. Idempotent."""
    claim = require_owned(table, agent_id, claim_id)
    if claim.lifecycle is Lifecycle.ARCHIVED:
        return claim
    archived = attrs.evolve(
        claim, lifecycle=Lifecycle.ARCHIVED, revision=claim.revision + 1, updated_at=now
    )
    table.put(archived)
    return archived


def restore(table: ClaimTable, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
    """Reactivate an archived claim; it is re-embedded (its vector may be gone). Idempotent
    for a row that is not archived."""
    claim = require_owned(table, agent_id, claim_id)
    if claim.lifecycle is not Lifecycle.ARCHIVED:
        return claim
    restored = attrs.evolve(
        claim,
        lifecycle=Lifecycle.ACTIVE,
        revision=claim.revision + 1,
        updated_at=now,
        embedding_state=EmbeddingState.PENDING,
        embedding=None,
    )
    table.put(restored)
    return restored


def delete(table: ClaimTable, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
    """Tombstones of the stored provenance and the normalised content, then the delete."""
    claim = require_owned(table, agent_id, claim_id)
    written = table.write_tombstones(agent_id, identities_of(claim), now=now)
    table.remove(claim)
    return DeleteOutcome(claim_id=claim_id, tombstones_written=written)


def run_clear_batch(
    table: ClaimTable, agent_id: str, *, batch_size: int, now: datetime | None
) -> ClearProgress:
    """Tombstone and delete up to `batch_size` of the agent's oldest rows (internal rows
    have no identity); the short batch drops lineage and moves the job to the vector phase.
    `now` only dates the tombstones; without a clock they take the job's time."""
    if isinstance(batch_size, bool) or not 1 <= batch_size <= MAX_CLEAR_BATCH:
        raise ValidationError("batch_size", f"must be in 1..{MAX_CLEAR_BATCH}")
    job = table.job(agent_id)
    if job is None:
        raise NotFound("no clear job for this agent")
    if job.phase is not ClearPhase.CLAIMS:
        return job.progress()
    rows = table.oldest(agent_id, batch_size)
    for claim in rows:
        if not claim.kind.is_internal:
            table.write_tombstones(agent_id, identities_of(claim), now=now or job.created_at)
        table.remove(claim)
    job = attrs.evolve(job, removed_count=job.removed_count + len(rows))
    if len(rows) < batch_size:
        table.drop_derivations(agent_id)
        job = attrs.evolve(job, phase=ClearPhase.VECTORS)
    table.set_job(agent_id, job)
    return job.progress(batch_removed=len(rows))


def begin_clear(table: ClaimTable, agent_id: str, *, now: datetime) -> ClearProgress:
    """Persist the job idempotently: an existing one is returned as it stands."""
    job = table.job(agent_id)
    if job is None:
        job = ClearJob(agent_id=agent_id, created_at=now)
        table.set_job(agent_id, job)
    return job.progress()


def finish_clear(table: ClaimTable, agent_id: str) -> None:
    job = table.job(agent_id)
    if job is None:
        return
    if job.phase is not ClearPhase.VECTORS:
        raise ValidationError("phase", "the clear has not finished deleting claims")
    table.set_job(agent_id, None)
