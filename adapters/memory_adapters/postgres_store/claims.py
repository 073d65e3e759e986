"""Claim writes: insert (the tombstone check in the same transaction), manual edit, supersede
(reviving a retired row the draft repeats).
Each function runs inside the caller's write transaction, which holds the owner's advisory
lock, so the duplicate and tombstone checks cannot race another writer of the same agent."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs
import psycopg

from memory_adapters.postgres_store import audit, tombstones
from memory_adapters.postgres_store.queries import CLAIM_SELECT, fetch_claim_row
from memory_adapters.postgres_store.rows import CLAIM_COLUMNS, ClaimRow, structure_row
from memory_core.domain.claims import ClaimDraft, ClaimKind, Lifecycle, WriteOrigin
from memory_core.domain.errors import (
    ClearInProgress,
    NotFound,
    RevisionConflict,
    ScopeError,
    ValidationError,
)
from memory_core.domain.provenance import (
    TombstoneIdentity,
    canonical_content,
    provenance_key,
    tombstone_identities,
    working_provenance_key,
)
from memory_core.domain.temporal import TemporalKind, TemporalMetadata
from memory_core.ports.claims import DerivationKind, InsertOutcome, InsertStatus
from memory_core.ports.secrets import SecretPolicy

__all__ = [
    "PreparedDraft",
    "add_derivation",
    "closing_instant",
    "ensure_not_fenced",
    "insert_prepared",
    "prepare",
    "require_owned_claim",
    "supersede",
    "update_content",
]

_INSERT_SQL = (
    f"INSERT INTO agent_memory ({', '.join(CLAIM_COLUMNS)})"
    f" VALUES ({', '.join('%s' for _ in CLAIM_COLUMNS)})"
)


@attrs.frozen(kw_only=True)
class PreparedDraft:
    """A draft after the secret policy, with its identities computed outside the lock."""

    draft: ClaimDraft
    content: str
    canonical: str
    key: str
    identities: tuple[TombstoneIdentity, ...]


def prepare(draft: ClaimDraft, policy: SecretPolicy) -> PreparedDraft:
    """Apply the secret policy (R-PRIV-1) and compute the scoped provenance key (R-DOM-3);
    keys and tombstones are computed over the text actually stored."""
    content = policy.check_write(draft.content, field="content")
    if not content.strip():
        raise ValidationError("content", "nothing left to store after the secret policy")
    agent_id = draft.agent_id
    if draft.kind is ClaimKind.WORKING:
        key = working_provenance_key(agent_id)  # one working row per agent
    else:
        key = provenance_key(agent_id, draft.kind, draft.scope, content)
    identities = (
        () if draft.kind.is_internal else tombstone_identities(agent_id, draft.scope, content, key)
    )
    return PreparedDraft(
        draft=draft,
        content=content,
        canonical=canonical_content(content),
        key=key,
        identities=identities,
    )


def ensure_not_fenced(conn: psycopg.Connection, agent_id: str) -> None:
    """Raise ClearInProgress early and without content (the trigger is the backstop)."""
    if conn.execute(
        "SELECT 1 FROM agent_memory_clear_job WHERE agent_id = %s", (agent_id,)
    ).fetchone():
        raise ClearInProgress("a clear job is pending for this agent")


def _row_by_key(conn: psycopg.Connection, agent_id: str, key: str) -> ClaimRow | None:
    row = conn.execute(
        f"SELECT {CLAIM_SELECT} FROM agent_memory m"
        " WHERE m.agent_id = %s AND m.provenance_key = %s",
        (agent_id, key),
    ).fetchone()
    return None if row is None else structure_row(row, ClaimRow)


def insert_prepared(
    conn: psycopg.Connection,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now: datetime,
    new_id: Callable[[], str],
) -> InsertOutcome:
    """Duplicate check, tombstone check (and release for a user add), insert (R-WRITE-4/5)."""
    draft = prepared.draft
    agent_id = draft.agent_id
    ensure_not_fenced(conn, agent_id)
    existing = _row_by_key(conn, agent_id, prepared.key)
    if existing is not None:
        return InsertOutcome(status=InsertStatus.DUPLICATE, claim=existing.to_claim())
    released = 0
    if prepared.identities and tombstones.matching(conn, agent_id, prepared.identities):
        if origin is not WriteOrigin.USER_ADD:
            return InsertOutcome(status=InsertStatus.SUPPRESSED)
        released = tombstones.release(conn, agent_id, prepared.identities)
    row = ClaimRow.from_draft(
        draft,
        claim_id=new_id(),
        content=prepared.content,
        canonical=prepared.canonical,
        provenance_key=prepared.key,
        now=now,
    )
    conn.execute(_INSERT_SQL, row.values())
    if origin is WriteOrigin.USER_ADD:
        audit.record(
            conn,
            agent_id=agent_id,
            event="memory/add",
            actor="user",
            now=now,
            memory_id=row.id,
            refs={"reauthorized": released > 0, "released": released},
        )
    return InsertOutcome(
        status=InsertStatus.INSERTED, claim=row.to_claim(), released_tombstones=released
    )


def require_owned_claim(conn: psycopg.Connection, agent_id: str, claim_id: str) -> ClaimRow:
    """The owner's non-internal row for a mutation, locked. ClearInProgress first, so a
    fenced agent learns nothing about its rows; NotFound for unknown and foreign ids alike."""
    ensure_not_fenced(conn, agent_id)
    row = fetch_claim_row(conn, agent_id, claim_id, for_update=True)
    if row is None:
        raise NotFound(f"no claim {claim_id} for this agent")
    if ClaimKind(row.kind).is_internal:
        raise ValidationError("kind", f"{row.kind} rows are internal and managed by projections")
    return row


def _check_revision(row: ClaimRow, expected: int) -> None:
    if row.revision != expected:
        raise RevisionConflict(f"claim {row.id} is at revision {row.revision}, not {expected}")


def add_derivation(
    conn: psycopg.Connection,
    agent_id: str,
    *,
    parent: str,
    child: str,
    kind: DerivationKind,
    now: datetime,
) -> None:
    """Idempotent lineage edge; a self-edge is meaningless and silently refused."""
    if parent == child:
        return
    conn.execute(
        """INSERT INTO agent_memory_derivation
             (agent_id, parent_memory_id, child_memory_id, derivation_kind, created_at)
           VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING""",
        (agent_id, parent, child, kind.value, now),
    )


def closing_instant(old: ClaimRow, draft: ClaimDraft, now: datetime) -> datetime:
    """When a superseded state stops holding: where its successor starts, if that is known
    and later than the old start; otherwise the moment the change was recorded."""
    start = draft.temporal.interval.valid_from
    if start is not None and (old.valid_from is None or start > old.valid_from):
        return start
    return now


def _mark_superseded(
    conn: psycopg.Connection, old: ClaimRow, successor_id: str, *, ends: datetime, now: datetime
) -> None:
    """Point `old` at its successor; a state still holding at `ends` ends there (its
    interval is closed, so evidence retrieval still sees when it was true)."""
    valid_until = old.valid_until
    if (
        old.temporal_kind == TemporalKind.STATE.value
        and (valid_until is None or valid_until > ends)
        and (old.valid_from is None or old.valid_from < ends)
    ):
        valid_until = ends
    conn.execute(
        """UPDATE agent_memory SET superseded_by = %s, valid_until = %s,
             revision = revision + 1, updated_at = %s
           WHERE agent_id = %s AND id = %s""",
        (successor_id, valid_until, now, old.agent_id, old.id),
    )


def _reopened_temporal(
    row: ClaimRow, incoming: TemporalMetadata, now: datetime
) -> tuple[object, ...]:
    """The temporal columns of a revived row: the draft's reading when it is dated; else a
    state holds again from now, open-ended, and any other kind keeps what it had."""
    if not incoming.is_atemporal:
        interval = incoming.interval
        return (
            incoming.kind.value,
            interval.valid_from,
            interval.valid_until,
            None if incoming.precision is None else incoming.precision.value,
            incoming.timezone,
            incoming.confidence,
        )
    start, end = row.valid_from, row.valid_until
    if row.temporal_kind == TemporalKind.STATE.value:
        start, end = now, None
    return (
        row.temporal_kind,
        start,
        end,
        row.temporal_precision,
        row.temporal_timezone,
        row.temporal_confidence,
    )


def _revive(
    conn: psycopg.Connection,
    row: ClaimRow,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now: datetime,
) -> InsertOutcome:
    """Make a retired row live again (reference §3.2 `revive_superseded`), under the same
    tombstone rules as an insert (R-WRITE-4/5). Its vector may be gone: re-embed."""
    agent_id = row.agent_id
    released = 0
    if prepared.identities and tombstones.matching(conn, agent_id, prepared.identities):
        if origin is not WriteOrigin.USER_ADD:
            return InsertOutcome(status=InsertStatus.SUPPRESSED)
        released = tombstones.release(conn, agent_id, prepared.identities)
    conn.execute(
        """UPDATE agent_memory SET superseded_by = NULL, temporal_kind = %s, valid_from = %s,
             valid_until = %s, temporal_precision = %s, temporal_timezone = %s,
             temporal_confidence = %s, revision = revision + 1, updated_at = %s,
             embedding_state = 'pending', embedding_provider = NULL, embedding_model = NULL,
             embedding_dim = NULL
           WHERE agent_id = %s AND id = %s""",
        (*_reopened_temporal(row, prepared.draft.temporal, now), now, agent_id, row.id),
    )
    revived = fetch_claim_row(conn, agent_id, row.id)
    assert revived is not None
    return InsertOutcome(
        status=InsertStatus.REVIVED, claim=revived.to_claim(), released_tombstones=released
    )


def _successor(
    conn: psycopg.Connection,
    old: ClaimRow,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now: datetime,
    new_id: Callable[[], str],
) -> tuple[InsertOutcome, bool]:
    """The row `old` is retired in favour of, and whether to retire it at all: an archived
    or conflicted row of the draft's provenance keeps `old` (the user's forget stands)."""
    existing = _row_by_key(conn, old.agent_id, prepared.key)
    if existing is None or existing.id == old.id:
        outcome = insert_prepared(conn, prepared, origin=origin, now=now, new_id=new_id)
        return outcome, True
    if existing.lifecycle_state == Lifecycle.ACTIVE.value and existing.superseded_by:
        return _revive(conn, existing, prepared, origin=origin, now=now), True
    claim = existing.to_claim()
    return InsertOutcome(status=InsertStatus.DUPLICATE, claim=claim), claim.is_recallable


def update_content(
    conn: psycopg.Connection,
    agent_id: str,
    claim_id: str,
    *,
    expected_revision: int,
    content: str,
    policy: SecretPolicy,
    now: datetime,
    new_id: Callable[[], str],
) -> ClaimRow:
    """Manual edit with revision CAS. Same provenance: in place. New provenance: a new row
    (or the live owner of that provenance) supersedes this one, edge `manual_edit`."""
    row = require_owned_claim(conn, agent_id, claim_id)
    _check_revision(row, expected_revision)
    prepared = prepare(attrs.evolve(_draft_of(row), content=content), policy)
    if prepared.key == row.provenance_key:
        conn.execute(
            """UPDATE agent_memory SET content = %s, canonical_content = %s,
                 revision = revision + 1, updated_at = %s, embedding_state = 'pending',
                 embedding_provider = NULL, embedding_model = NULL, embedding_dim = NULL
               WHERE agent_id = %s AND id = %s""",
            (prepared.content, prepared.canonical, now, agent_id, row.id),
        )
        successor_id = row.id
    else:
        # The user typed this text: their edit re-authorises it like an explicit add.
        outcome = insert_prepared(
            conn, prepared, origin=WriteOrigin.USER_ADD, now=now, new_id=new_id
        )
        assert outcome.claim is not None
        successor_id = outcome.claim.id
        _mark_superseded(conn, row, successor_id, ends=now, now=now)
        add_derivation(
            conn,
            agent_id,
            parent=row.id,
            child=successor_id,
            kind=DerivationKind.MANUAL_EDIT,
            now=now,
        )
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/manual_edit",
        actor="user",
        now=now,
        memory_id=row.id,
        refs={"successor_id": successor_id},
    )
    updated = fetch_claim_row(conn, agent_id, successor_id)
    assert updated is not None
    return updated


def supersede(
    conn: psycopg.Connection,
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
    old = require_owned_claim(conn, agent_id, old_id)
    if old.scope() != prepared.draft.scope:
        raise ScopeError("scope", "supersede never crosses scopes")
    _check_revision(old, expected_revision)
    if old.superseded_by is not None:
        raise RevisionConflict(f"claim {old_id} is already superseded")
    outcome, retire = _successor(conn, old, prepared, origin=origin, now=now, new_id=new_id)
    if not retire or outcome.claim is None or outcome.claim.id == old.id:
        return outcome  # kept, suppressed, or the "successor" is this very claim
    ends = closing_instant(old, prepared.draft, now)
    _mark_superseded(conn, old, outcome.claim.id, ends=ends, now=now)
    add_derivation(
        conn,
        agent_id,
        parent=old.id,
        child=outcome.claim.id,
        kind=DerivationKind.SUPERSEDE,
        now=now,
    )
    return outcome


def _draft_of(row: ClaimRow) -> ClaimDraft:
    claim = row.to_claim()
    return ClaimDraft(
        agent_id=claim.agent_id,
        kind=claim.kind,
        content=claim.content,
        category=claim.category,
        importance=claim.importance,
        confidence=claim.confidence,
        temporal=claim.temporal,
        scope=claim.scope,
        source=claim.source,
        slot=claim.slot,
    )
