"""Claim writes: insert (the tombstone check in the same transaction), manual edit and
supersede (which revives a retired row the draft repeats). Each function runs inside the
caller's write transaction — SQLite's single writer, or PostgreSQL's per-owner advisory
lock — so the duplicate and tombstone checks cannot race another writer of the agent. The
decisions are `memory_core.storage`'s; this module runs the statements they call for."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime

from memory_adapters.sql_claims import audit, conflict_links, tombstones
from memory_adapters.sql_claims.queries import CLAIM_SELECT, claim_row, fetch_claim_row
from memory_adapters.sql_claims.rows import (
    CLAIM_COLUMNS,
    ClaimRow,
    inserted_claim,
    temporal_columns,
)
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import WriteOrigin
from memory_core.domain.errors import ClearInProgress, NotFound, ValidationError
from memory_core.domain.provenance import TombstoneIdentity
from memory_core.ports.claims import DerivationKind, InsertOutcome, InsertStatus
from memory_core.ports.secrets import SecretPolicy
from memory_core.storage.admission import (
    Admission,
    admit,
    probed_identities,
    tombstone_verdict,
)
from memory_core.storage.conflicts import Removal
from memory_core.storage.drafts import PreparedDraft, draft_of, prepare
from memory_core.storage.intervals import closed_valid_until, closing_instant, reopened_temporal
from memory_core.storage.succession import (
    Successor,
    check_mutable,
    check_revision,
    check_supersede,
    decide_successor,
)

__all__ = [
    "add_derivation",
    "ensure_not_fenced",
    "insert_batch",
    "insert_prepared",
    "require_owned_claim",
    "supersede",
    "update_content",
]

_INSERT_INTO = f"INSERT INTO agent_memory ({', '.join(CLAIM_COLUMNS)}) VALUES "
_ROW_VALUES = f"({', '.join('?' for _ in CLAIM_COLUMNS)})"
# Rows go in statements of 64, 32, … 1 rows: a batch of n rows takes about log2(n) + n/64
# statements, and only these seven shapes are ever prepared and cached.
_STATEMENT_ROWS = (64, 32, 16, 8, 4, 2, 1)
# A content change or a revival: the vector no longer matches, so the row is re-embedded.
_REEMBED = (
    "revision = revision + 1, updated_at = ?, embedding_state = 'pending',"
    " embedding_provider = NULL, embedding_model = NULL, embedding_dim = NULL"
)


def ensure_not_fenced(session: Session, agent_id: str) -> None:
    """Raise ClearInProgress early and without content (the trigger is the backstop)."""
    if session.one("SELECT 1 FROM agent_memory_clear_job WHERE agent_id = ?", (agent_id,)):
        raise ClearInProgress("a clear job is pending for this agent")


def _row_by_key(session: Session, agent_id: str, key: str) -> ClaimRow | None:
    row = session.one(
        f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE m.agent_id = ? AND m.provenance_key = ?",
        (agent_id, key),
    )
    return None if row is None else claim_row(session, row)


def _rows_by_key(session: Session, agent_id: str, keys: Sequence[str]) -> dict[str, ClaimRow]:
    """The owner's rows holding any of `keys`, by key: one statement for a whole batch,
    each key a probe of the provenance index."""
    rows = session.execute(
        f"""SELECT {CLAIM_SELECT} FROM agent_memory m
            WHERE m.agent_id = ? AND {session.dialect.id_list("m.provenance_key")}""",
        (agent_id, list(dict.fromkeys(keys))),
    )
    found = (claim_row(session, values) for values in rows)
    return {row.provenance_key: row for row in found if row.provenance_key is not None}


def _tombstone_gate(
    session: Session, prepared: PreparedDraft, admission: Admission, origin: WriteOrigin
) -> int:
    """Release the draft's tombstones when the rule says so; how many were released."""
    if admission is Admission.RELEASED:
        identities = probed_identities(prepared.identities, origin)
        return tombstones.release(session, prepared.draft.agent_id, identities)
    return 0


def _tombstoned(session: Session, prepared: PreparedDraft, origin: WriteOrigin) -> bool:
    identities = probed_identities(prepared.identities, origin)
    return (
        bool(identities) and tombstones.matching(session, prepared.draft.agent_id, identities) > 0
    )


def insert_prepared(
    session: Session,
    prepared: PreparedDraft,
    *,
    origin: WriteOrigin,
    now: datetime,
    new_id: Callable[[], str],
) -> InsertOutcome:
    """Duplicate check, tombstone check (and release for a user add), insert (R-WRITE-4/5)."""
    return insert_batch(session, [prepared], origin=origin, now=now, new_id=new_id)[0]


def insert_batch(
    session: Session,
    batch: Sequence[PreparedDraft],
    *,
    origin: WriteOrigin,
    now: datetime,
    new_id: Callable[[], str],
) -> list[InsertOutcome]:
    """`batch` inserted in order, each draft decided as if it were inserted alone after the
    ones before it (R-WRITE-4/5): a key stored already, or earlier in the batch, is a
    duplicate of that row; a tombstoned identity suppresses the draft unless a user's add
    releases it. The reads are per batch, not per draft — one fence check and one read of
    existing keys per owner, one tombstone read per owner and identity kind — so an
    ingestion chunk of a hundred claims pays a few statements besides its rows (issue 15)."""
    owners = list(dict.fromkeys(prepared.draft.agent_id for prepared in batch))
    for agent_id in owners:
        ensure_not_fenced(session, agent_id)
    existing: dict[tuple[str, str], ClaimRow | InsertOutcome] = {}
    for agent_id in owners:
        keys = [item.key for item in batch if item.draft.agent_id == agent_id]
        for key, row in _rows_by_key(session, agent_id, keys).items():
            existing[(agent_id, key)] = row
    # Only the drafts whose key is new are probed: a duplicate costs no tombstone probe.
    buried = tombstones.buried(
        session,
        [
            (item.draft.agent_id, probed_identities(item.identities, origin))
            for item in batch
            if (item.draft.agent_id, item.key) not in existing
        ],
    )
    outcomes: list[InsertOutcome] = []
    rows: list[ClaimRow] = []
    added: list[tuple[ClaimRow, int]] = []  # a user's adds, and the tombstones each released
    indexed: dict[str, list[str]] = {}  # owner -> its inserted recallable rows, in order
    for item in batch:
        draft, slot = item.draft, (item.draft.agent_id, item.key)
        probed = probed_identities(item.identities, origin)
        held = existing.get(slot)
        admission = admit(
            duplicate=held is not None,
            tombstoned=functools.partial(_any_buried, buried, slot[0], probed),
            origin=origin,
        )
        if held is not None:
            # A row stored before the batch, or the outcome of its twin earlier in it.
            claim = held.to_claim() if isinstance(held, ClaimRow) else held.claim
            outcomes.append(InsertOutcome(status=InsertStatus.DUPLICATE, claim=claim))
            continue
        if not admission.writes:
            outcomes.append(InsertOutcome(status=InsertStatus.SUPPRESSED))
            continue
        released = _tombstone_gate(session, item, admission, origin)
        if released:  # gone for the rest of the batch too
            buried.difference_update(_keys(slot[0], probed))
        row = ClaimRow.from_prepared(item, claim_id=new_id(), now=now)
        rows.append(row)
        if origin is WriteOrigin.USER_ADD:
            added.append((row, released))
        if not draft.kind.is_internal:  # a new claim is active and unsuperseded: recallable
            indexed.setdefault(row.agent_id, []).append(row.id)
        outcome = InsertOutcome(
            status=InsertStatus.INSERTED,
            claim=inserted_claim(row, draft, item.temporal),
            released_tombstones=released,
        )
        existing[slot] = outcome
        outcomes.append(outcome)
    # Nothing in the loop reads the batch's own rows back (twins are found in `existing`),
    # so they are written after it, in order, then their audit events.
    _insert_rows(session, rows)
    for row, released in added:
        audit.record(
            session,
            agent_id=row.agent_id,
            event="memory/add",
            actor="user",
            now=now,
            memory_id=row.id,
            refs={"reauthorized": released > 0, "released": released},
        )
    for agent_id, claim_ids in indexed.items():
        session.dialect.mirror_inserted(session, agent_id, claim_ids)
    return outcomes


def _keys(agent_id: str, identities: Sequence[TombstoneIdentity]) -> list[tuple[str, str, str]]:
    return [(agent_id, identity.kind.value, identity.hash) for identity in identities]


def _any_buried(
    buried: set[tuple[str, str, str]], agent_id: str, identities: Sequence[TombstoneIdentity]
) -> bool:
    return not buried.isdisjoint(_keys(agent_id, identities))


def _insert_rows(session: Session, rows: Sequence[ClaimRow]) -> None:
    """`rows` in order, several to a statement (`_STATEMENT_ROWS`). One statement per row
    cost a GIL hand-back per row on SQLite: while the model or the extractor ran Python on
    another thread, each waited out a switch interval, and a chunk's insert took twice its
    CPU (issue 15). Rowids follow the order, as the lexical mirror expects."""
    start = 0
    while start < len(rows):
        size = next(size for size in _STATEMENT_ROWS if size <= len(rows) - start)
        params = [value for row in rows[start : start + size] for value in row.values()]
        session.execute(_INSERT_INTO + ", ".join([_ROW_VALUES] * size), params)
        start += size


def require_owned_claim(session: Session, agent_id: str, claim_id: str) -> ClaimRow:
    """The owner's non-internal row for a mutation, locked where the dialect can.
    ClearInProgress first, so a fenced agent learns nothing about its rows; NotFound for
    unknown and foreign ids alike (R-PRIV-2)."""
    ensure_not_fenced(session, agent_id)
    row = fetch_claim_row(session, agent_id, claim_id, for_update=True)
    if row is None:
        raise NotFound(f"no claim {claim_id} for this agent")
    check_mutable(row.kind)
    return row


def add_derivation(
    session: Session,
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
    session.execute(
        """INSERT INTO agent_memory_derivation
             (agent_id, parent_memory_id, child_memory_id, derivation_kind, created_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
        (agent_id, parent, child, kind.value, now),
    )


def _retire(
    session: Session,
    old: ClaimRow,
    successor_id: str,
    *,
    ends: datetime,
    now: datetime,
    kind: DerivationKind,
) -> None:
    """Point `old` at its successor, close its interval where the rule says, add the edge;
    a challenge `old` takes part in is settled first (`storage.conflicts`)."""
    conflict_links.settle_removed(
        session,
        old.agent_id,
        old.id,
        Removal.RETIRE,
        actor="user" if kind is DerivationKind.MANUAL_EDIT else "system",
        now=now,
    )
    valid_until = closed_valid_until(old.to_claim().temporal, ends)
    session.execute(
        """UPDATE agent_memory SET superseded_by = ?, valid_until = ?,
             revision = revision + 1, updated_at = ?
           WHERE agent_id = ? AND id = ?""",
        (successor_id, valid_until, now, old.agent_id, old.id),
    )
    add_derivation(session, old.agent_id, parent=old.id, child=successor_id, kind=kind, now=now)


def _revive(
    session: Session, row: ClaimRow, prepared: PreparedDraft, *, origin: WriteOrigin, now: datetime
) -> InsertOutcome:
    """Make a retired row live again (reference §3.2 `revive_superseded`), under the same
    tombstone rules as an insert (R-WRITE-4/5). Its vector may be gone: re-embed."""
    admission = tombstone_verdict(tombstoned=_tombstoned(session, prepared, origin), origin=origin)
    if not admission.writes:
        return InsertOutcome(status=InsertStatus.SUPPRESSED)
    released = _tombstone_gate(session, prepared, admission, origin)
    columns = temporal_columns(reopened_temporal(row.to_claim().temporal, prepared.temporal, now))
    assignments = ", ".join(f"{column} = ?" for column in columns)
    session.execute(
        f"UPDATE agent_memory SET superseded_by = NULL, {assignments}, {_REEMBED}"
        " WHERE agent_id = ? AND id = ?",
        (*columns.values(), now, row.agent_id, row.id),
    )
    revived = fetch_claim_row(session, row.agent_id, row.id)
    assert revived is not None
    return InsertOutcome(
        status=InsertStatus.REVIVED, claim=revived.to_claim(), released_tombstones=released
    )


def update_content(
    session: Session,
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
    row = require_owned_claim(session, agent_id, claim_id)
    check_revision(row.id, row.revision, expected_revision)
    prepared = prepare(draft_of(row.to_claim(), content=content), policy)
    if prepared.key == row.provenance_key:
        session.execute(
            f"UPDATE agent_memory SET content = ?, canonical_content = ?, {_REEMBED}"
            " WHERE agent_id = ? AND id = ?",
            (prepared.content, prepared.canonical, now, agent_id, row.id),
        )
        successor_id = row.id
    else:
        # The user typed this text: their edit re-authorises it like an explicit add.
        outcome = insert_prepared(
            session, prepared, origin=WriteOrigin.USER_ADD, now=now, new_id=new_id
        )
        assert outcome.claim is not None
        successor_id = outcome.claim.id
        _retire(session, row, successor_id, ends=now, now=now, kind=DerivationKind.MANUAL_EDIT)
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/manual_edit",
        actor="user",
        now=now,
        memory_id=row.id,
        refs={"successor_id": successor_id},
    )
    updated = fetch_claim_row(session, agent_id, successor_id)
    assert updated is not None
    return updated


def supersede(
    session: Session,
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
    old = require_owned_claim(session, agent_id, old_id)
    check_supersede(old.to_claim(), prepared.draft, expected_revision=expected_revision)
    existing = _row_by_key(session, agent_id, prepared.key)
    decision = decide_successor(old.id, None if existing is None else existing.to_claim())
    if decision.action is Successor.INSERT:
        outcome = insert_prepared(session, prepared, origin=origin, now=now, new_id=new_id)
    elif decision.action is Successor.REVIVE:
        assert existing is not None
        outcome = _revive(session, existing, prepared, origin=origin, now=now)
    else:
        assert existing is not None
        outcome = InsertOutcome(status=InsertStatus.DUPLICATE, claim=existing.to_claim())
    if not decision.retire_old or outcome.claim is None or outcome.claim.id == old.id:
        return outcome  # kept, suppressed, or the "successor" is this very claim
    ends = closing_instant(old.to_claim().temporal, prepared.temporal, now)
    _retire(session, old, outcome.claim.id, ends=ends, now=now, kind=DerivationKind.SUPERSEDE)
    return outcome
