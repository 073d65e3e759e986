"""Claim writes: insert (with the tombstone check in the same transaction), manual edit,
and supersede (which revives a retired row the draft repeats). Each function runs inside
the caller's write transaction."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import apsw
import attrs

from memory_adapters.sqlite_store import audit, fts, tombstones
from memory_adapters.sqlite_store.queries import CLAIM_SELECT, fetch_claim_row
from memory_adapters.sqlite_store.rows import ClaimRow, from_ms, structure_row, to_ms
from memory_core.domain.claims import (
    Claim,
    ClaimDraft,
    ClaimKind,
    EmbeddingState,
    Lifecycle,
    WriteOrigin,
)
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

_INSERT_COLUMNS = tuple(field.name for field in attrs.fields(ClaimRow) if field.name != "rid")
_INSERT_SQL = (
    f"INSERT INTO agent_memory ({', '.join(_INSERT_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in _INSERT_COLUMNS)})"
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
    """Apply the secret policy (R-PRIV-1) and compute the scoped provenance key (R-DOM-3).

    Keys and tombstones are computed over the text actually stored, so a redacted claim is
    suppressed by the tombstone of its redacted form.
    """
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


def ensure_not_fenced(conn: apsw.Connection, agent_id: str) -> None:
    """Raise ClearInProgress early and without content (the trigger is the backstop)."""
    if conn.execute(
        "SELECT 1 FROM agent_memory_clear_job WHERE agent_id = ?", (agent_id,)
    ).fetchone():
        raise ClearInProgress("a clear job is pending for this agent")


def _row_by_key(conn: apsw.Connection, agent_id: str, key: str) -> ClaimRow | None:
    row = conn.execute(
        f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE m.agent_id = ? AND m.provenance_key = ?",
        (agent_id, key),
    ).fetchone()
    return None if row is None else structure_row(row, ClaimRow)


def insert_prepared(
    conn: apsw.Connection,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now_ms: int,
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
        now_ms=now_ms,
    )
    # rid is first; positional binding skips the per-row dict the converter would build.
    conn.execute(_INSERT_SQL, attrs.astuple(row, recurse=False)[1:])
    if not draft.kind.is_internal:  # a new claim is active and unsuperseded: recallable
        fts.mirror_insert(conn, conn.last_insert_rowid(), prepared.content, agent_id)
    if origin is WriteOrigin.USER_ADD:
        audit.record(
            conn,
            agent_id=agent_id,
            event="memory/add",
            actor="user",
            now_ms=now_ms,
            memory_id=row.id,
            refs={"reauthorized": released > 0, "released": released},
        )
    return InsertOutcome(
        status=InsertStatus.INSERTED,
        claim=_inserted_claim(row, draft),
        released_tombstones=released,
    )


def _ms_aligned(value: datetime | None) -> bool:
    return value is None or value.microsecond % 1000 == 0


def _inserted_claim(row: ClaimRow, draft: ClaimDraft) -> Claim:
    """The claim as `get` will read it back, built from the already validated draft values
    (re-validating every field of every inserted row is most of an insert's cost)."""
    interval = draft.temporal.interval
    if not (_ms_aligned(interval.valid_from) and _ms_aligned(interval.valid_until)):
        return row.to_claim()  # storage truncates to milliseconds; read it back exactly
    created = from_ms(row.created_at)
    return Claim(
        id=row.id,
        agent_id=row.agent_id,
        kind=draft.kind,
        content=row.content,
        canonical_content=row.canonical_content,
        category=draft.category,
        importance=row.importance,
        confidence=draft.confidence,
        temporal=draft.temporal,
        scope=draft.scope,
        provenance_key=row.provenance_key,
        source=draft.source,
        lifecycle=Lifecycle.ACTIVE,
        embedding_state=EmbeddingState(row.embedding_state),
        created_at=created,
        updated_at=created,
        slot=draft.slot,
    )


def require_owned_claim(conn: apsw.Connection, agent_id: str, claim_id: str) -> ClaimRow:
    """The owner's non-internal row for a mutation. ClearInProgress first, so a fenced agent
    learns nothing about its rows; NotFound for unknown and foreign ids alike (R-PRIV-2)."""
    ensure_not_fenced(conn, agent_id)
    row = fetch_claim_row(conn, agent_id, claim_id)
    if row is None:
        raise NotFound(f"no claim {claim_id} for this agent")
    if ClaimKind(row.kind).is_internal:
        raise ValidationError("kind", f"{row.kind} rows are internal and managed by projections")
    return row


def _check_revision(row: ClaimRow, expected: int) -> None:
    if row.revision != expected:
        raise RevisionConflict(f"claim {row.id} is at revision {row.revision}, not {expected}")


def add_derivation(
    conn: apsw.Connection,
    agent_id: str,
    *,
    parent: str,
    child: str,
    kind: DerivationKind,
    now_ms: int,
) -> None:
    """Idempotent lineage edge; a self-edge is meaningless and silently refused."""
    if parent == child:
        return
    conn.execute(
        """INSERT INTO agent_memory_derivation
             (agent_id, parent_memory_id, child_memory_id, derivation_kind, created_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
        (agent_id, parent, child, kind.value, now_ms),
    )


def closing_instant(old: ClaimRow, draft: ClaimDraft, now_ms: int) -> int:
    """When a superseded state stops holding: where its successor starts, if that is known
    and later than the old start; otherwise the moment the change was recorded."""
    start = draft.temporal.interval.valid_from
    if start is not None:
        start_ms = to_ms(start)
        if old.valid_from is None or start_ms > old.valid_from:
            return start_ms
    return now_ms


def _mark_superseded(
    conn: apsw.Connection, old: ClaimRow, successor_id: str, *, ends_ms: int, now_ms: int
) -> None:
    """Point `old` at its successor; a state still holding at `ends_ms` ends there (its
    interval is closed, so evidence retrieval still sees when it was true)."""
    valid_until = old.valid_until
    if (
        old.temporal_kind == TemporalKind.STATE.value
        and (valid_until is None or valid_until > ends_ms)
        and (old.valid_from is None or old.valid_from < ends_ms)
    ):
        valid_until = ends_ms
    conn.execute(
        """UPDATE agent_memory SET superseded_by = ?, valid_until = ?,
             revision = revision + 1, updated_at = ?
           WHERE rid = ?""",
        (successor_id, valid_until, now_ms, old.rid),
    )


def _reopened_temporal(
    row: ClaimRow, incoming: TemporalMetadata, now_ms: int
) -> tuple[object, ...]:
    """The temporal columns of a revived row: the draft's reading when it is dated; else a
    state holds again from now, open-ended, and any other kind keeps what it had."""
    if not incoming.is_atemporal:
        interval = incoming.interval
        return (
            incoming.kind.value,
            None if interval.valid_from is None else to_ms(interval.valid_from),
            None if interval.valid_until is None else to_ms(interval.valid_until),
            None if incoming.precision is None else incoming.precision.value,
            incoming.timezone,
            incoming.confidence,
        )
    start, end = row.valid_from, row.valid_until
    if row.temporal_kind == TemporalKind.STATE.value:
        start, end = now_ms, None
    return (
        row.temporal_kind,
        start,
        end,
        row.temporal_precision,
        row.temporal_timezone,
        row.temporal_confidence,
    )


def _revive(
    conn: apsw.Connection,
    row: ClaimRow,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now_ms: int,
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
        """UPDATE agent_memory SET superseded_by = NULL, temporal_kind = ?, valid_from = ?,
             valid_until = ?, temporal_precision = ?, temporal_timezone = ?,
             temporal_confidence = ?, revision = revision + 1, updated_at = ?,
             embedding_state = 'pending', embedding_provider = NULL, embedding_model = NULL,
             embedding_dim = NULL
           WHERE rid = ?""",
        (*_reopened_temporal(row, prepared.draft.temporal, now_ms), now_ms, row.rid),
    )
    revived = fetch_claim_row(conn, agent_id, row.id)
    assert revived is not None
    return InsertOutcome(
        status=InsertStatus.REVIVED, claim=revived.to_claim(), released_tombstones=released
    )


def _successor(
    conn: apsw.Connection,
    old: ClaimRow,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now_ms: int,
    new_id: Callable[[], str],
) -> tuple[InsertOutcome, bool]:
    """The row `old` is retired in favour of, and whether to retire it at all: an archived
    or conflicted row of the draft's provenance keeps `old` (the user's forget stands)."""
    existing = _row_by_key(conn, old.agent_id, prepared.key)
    if existing is None or existing.id == old.id:
        outcome = insert_prepared(conn, prepared, origin=origin, now_ms=now_ms, new_id=new_id)
        return outcome, True
    if existing.lifecycle_state == Lifecycle.ACTIVE.value and existing.superseded_by:
        return _revive(conn, existing, prepared, origin=origin, now_ms=now_ms), True
    claim = existing.to_claim()
    return InsertOutcome(status=InsertStatus.DUPLICATE, claim=claim), claim.is_recallable


def update_content(
    conn: apsw.Connection,
    agent_id: str,
    claim_id: str,
    *,
    expected_revision: int,
    content: str,
    policy: SecretPolicy,
    now_ms: int,
    new_id: Callable[[], str],
) -> ClaimRow:
    """Manual edit with revision CAS. Same provenance: in place. New provenance: a new row
    (or the live owner of that provenance) supersedes this one, edge `manual_edit`."""
    row = require_owned_claim(conn, agent_id, claim_id)
    _check_revision(row, expected_revision)
    draft = attrs.evolve(_draft_of(row), content=content)
    prepared = prepare(draft, policy)
    if prepared.key == row.provenance_key:
        conn.execute(
            """UPDATE agent_memory SET content = ?, canonical_content = ?,
                 revision = revision + 1, updated_at = ?, embedding_state = 'pending',
                 embedding_provider = NULL, embedding_model = NULL, embedding_dim = NULL
               WHERE rid = ?""",
            (prepared.content, prepared.canonical, now_ms, row.rid),
        )
        successor_id = row.id
    else:
        # The user typed this text: their edit re-authorises it like an explicit add.
        outcome = insert_prepared(
            conn, prepared, origin=WriteOrigin.USER_ADD, now_ms=now_ms, new_id=new_id
        )
        assert outcome.claim is not None
        successor_id = outcome.claim.id
        _mark_superseded(conn, row, successor_id, ends_ms=now_ms, now_ms=now_ms)
        add_derivation(
            conn,
            agent_id,
            parent=row.id,
            child=successor_id,
            kind=DerivationKind.MANUAL_EDIT,
            now_ms=now_ms,
        )
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/manual_edit",
        actor="user",
        now_ms=now_ms,
        memory_id=row.id,
        refs={"successor_id": successor_id},
    )
    updated = fetch_claim_row(conn, agent_id, successor_id)
    assert updated is not None
    return updated


def supersede(
    conn: apsw.Connection,
    agent_id: str,
    old_id: str,
    prepared: PreparedDraft,
    *,
    expected_revision: int,
    origin: WriteOrigin,
    now_ms: int,
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
    outcome, retire = _successor(conn, old, prepared, origin=origin, now_ms=now_ms, new_id=new_id)
    if not retire or outcome.claim is None or outcome.claim.id == old.id:
        return outcome  # kept, suppressed, or the "successor" is this very claim
    ends_ms = closing_instant(old, prepared.draft, now_ms)
    _mark_superseded(conn, old, outcome.claim.id, ends_ms=ends_ms, now_ms=now_ms)
    add_derivation(
        conn,
        agent_id,
        parent=old.id,
        child=outcome.claim.id,
        kind=DerivationKind.SUPERSEDE,
        now_ms=now_ms,
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
