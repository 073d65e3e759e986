"""Consolidation statements: the dirty queue, merges, stale archiving and the maintenance
audit trail (R-MAINT-1, R-LINEAGE-1, reference §7.7, §8.3–8.4, §8.8). Each function runs
inside the caller's transaction; `MaintenanceMethods` is the `Consolidation` role the
`SqlClaimStore` inherits. The rules (which pair may merge and what it changes,
what is stale, where a deferred seed goes, what retention may drop) are
`memory_core.storage.consolidation`'s."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta

import attrs

from memory_adapters.sql_claims import audit, tombstones
from memory_adapters.sql_claims.claims import add_derivation, ensure_not_fenced, insert_prepared
from memory_adapters.sql_claims.queries import (
    CLAIM_SELECT,
    NOT_FENCED,
    claims_of,
    fetch_claim_row,
    recallable,
)
from memory_adapters.sql_claims.rows import CLAIM_COLUMNS, ClaimRow
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import Claim, ClaimDraft, WriteOrigin
from memory_core.domain.validation import check_int
from memory_core.ports.claims import (
    MAX_DIRTY_BATCH,
    DerivationKind,
    DirtySeed,
    InsertOutcome,
    InsertStatus,
    MergeRequest,
)
from memory_core.ports.secrets import SecretPolicy
from memory_core.storage.consolidation import (
    OPERATIONAL_EVENTS,
    check_merge,
    check_reflections,
    deferred_at,
    merged_wording,
    prepared_wording,
    stale_ids,
    survivor_fields,
)
from memory_core.storage.drafts import PreparedDraft, prepare

__all__ = ["MaintenanceMethods", "merged_rows"]

# A merge chain longer than this is a corrupt store, not a history: stop walking it.
_MAX_MERGE_DEPTH = 64
# Rows the stale scan reads per call, so a large agent's pass stays bounded.
_STALE_SCAN = 1_024
_INSERT_ROW = (
    f"INSERT INTO agent_memory ({', '.join(CLAIM_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in CLAIM_COLUMNS)})"
)


def _seeds(session: Session, rows: Sequence[Sequence[object]]) -> list[DirtySeed]:
    return [
        DirtySeed(
            memory_id=str(memory_id),
            generation=int(generation),  # type: ignore[call-overload]
            claim_revision=int(revision),  # type: ignore[call-overload]
            enqueued_at=session.instant(enqueued),
        )
        for memory_id, generation, revision, enqueued in rows
    ]


def settle(session: Session, agent_id: str, seeds: Sequence[DirtySeed]) -> int:
    return sum(
        session.changed(
            "DELETE FROM agent_memory_dirty WHERE agent_id = ? AND memory_id = ?"
            " AND generation = ?",
            (agent_id, seed.memory_id, seed.generation),
        )
        for seed in seeds
    )


def merged_rows(session: Session, agent_id: str, claim_id: str) -> list[str]:
    """Ids merged into `claim_id`, transitively, still stored and retired into it."""
    found: list[str] = []
    frontier = [claim_id]
    for _ in range(_MAX_MERGE_DEPTH):
        if not frontier:
            break
        children = frontier
        frontier = []
        for child in children:
            rows = session.execute(
                """SELECT d.parent_memory_id FROM agent_memory_derivation d
                   JOIN agent_memory m ON m.agent_id = d.agent_id AND m.id = d.parent_memory_id
                   WHERE d.agent_id = ? AND d.child_memory_id = ? AND d.derivation_kind = ?
                     AND m.superseded_by = ?
                   ORDER BY d.parent_memory_id""",
                (agent_id, child, DerivationKind.MERGE.value, child),
            ).fetchall()
            for (parent,) in rows:
                if parent not in found and parent != claim_id:
                    found.append(str(parent))
                    frontier.append(str(parent))
    return found


def _wording(
    session: Session, survivor: Claim, content: str | None, policy: SecretPolicy
) -> PreparedDraft | None:
    """The model's merged text if the survivor may take it (`merged_wording`)."""
    prepared = prepared_wording(survivor, content, policy)
    if prepared is None:
        return None
    owner = session.one(
        "SELECT id FROM agent_memory WHERE agent_id = ? AND provenance_key = ?",
        (survivor.agent_id, prepared.key),
    )
    return merged_wording(
        prepared,
        survivor,
        tombstoned=tombstones.matching(session, survivor.agent_id, prepared.identities) > 0,
        key_owner=None if owner is None else str(owner[0]),
    )


def _keep_former_wording(session: Session, before: ClaimRow, copy_id: str, now: datetime) -> None:
    """The survivor's wording before the merge, kept as a row retired into it (its own id,
    a `merge` edge): a delete of the survivor then tombstones that exact text too, so a
    replay of the conversation that said it stays suppressed (R-FORGET-1)."""
    copy = attrs.evolve(
        before,
        id=copy_id,
        superseded_by=before.id,
        updated_at=now,
        embedding_state="pending",  # never embedded: a retired row is not eligible
        embedding_provider=None,
        embedding_model=None,
        embedding_dim=None,
    )
    session.execute(_INSERT_ROW, attrs.astuple(copy, recurse=False))
    add_derivation(
        session,
        before.agent_id,
        parent=copy_id,
        child=before.id,
        kind=DerivationKind.MERGE,
        now=now,
    )


def _merge(
    session: Session,
    agent_id: str,
    request: MergeRequest,
    now: datetime,
    *,
    policy: SecretPolicy,
    new_id: Callable[[], str],
) -> Claim:
    ensure_not_fenced(session, agent_id)
    rows = [
        fetch_claim_row(session, agent_id, claim_id, for_update=True)
        for claim_id in (request.survivor_id, request.retired_id)
    ]
    survivor, retired = check_merge(
        request,
        *(None if row is None else row.to_claim() for row in rows),
        challenged={row.id for row in rows if row is not None and row.conflict_state},
    )
    fields = survivor_fields(survivor, retired)
    wording = _wording(session, survivor, request.content, policy)
    session.execute(
        # Re-embedded like any revision change: recall checks a vector's revision (§8.4).
        # The lexical mirror follows a content change by its update trigger.
        """UPDATE agent_memory SET importance = ?, confidence = ?, category = ?,
             content = ?, canonical_content = ?, provenance_key = ?,
             revision = revision + 1, updated_at = ?, embedding_state = 'pending',
             embedding_provider = NULL, embedding_model = NULL, embedding_dim = NULL
           WHERE agent_id = ? AND id = ?""",
        (
            fields.importance,
            fields.confidence,
            None if fields.category is None else fields.category.value,
            survivor.content if wording is None else wording.content,
            survivor.canonical_content if wording is None else wording.canonical,
            survivor.provenance_key if wording is None else wording.key,
            now,
            agent_id,
            survivor.id,
        ),
    )
    if wording is not None:
        former = new_id()
        _keep_former_wording(session, rows[0], former, now)  # type: ignore[arg-type]
    session.execute(
        """UPDATE agent_memory SET superseded_by = ?, revision = revision + 1, updated_at = ?
           WHERE agent_id = ? AND id = ?""",
        (survivor.id, now, agent_id, retired.id),
    )
    add_derivation(
        session, agent_id, parent=retired.id, child=survivor.id, kind=DerivationKind.MERGE, now=now
    )
    # The UPDATEs above re-dirtied both rows: the seeds read before them carry an older
    # generation, so the rows' current seeds are the ones this merge settles.
    both = session.dialect.id_list("memory_id")
    session.execute(
        f"DELETE FROM agent_memory_dirty WHERE agent_id = ? AND {both}",
        (agent_id, [survivor.id, retired.id, *([] if wording is None else [former])]),
    )
    settle(session, agent_id, request.settle)
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/merge",
        actor="scheduler",
        now=now,
        memory_id=survivor.id,
        refs={"retired": retired.id, "wording": "kept" if wording is None else "merged"},
    )
    fresh = fetch_claim_row(session, agent_id, survivor.id)
    assert fresh is not None
    return fresh.to_claim()


class MaintenanceMethods:
    """The `Consolidation` role over the concrete store's transactions."""

    _write: Callable[..., AbstractContextManager[Session]]
    _read: Callable[[], AbstractContextManager[Session]]
    _now: Callable[..., datetime]
    _policy: SecretPolicy
    _claim_id: Callable[[], str]

    def dirty_agents(self, *, limit: int) -> Sequence[str]:
        check_int(limit, "limit", minimum=1)
        with self._read() as session:
            rows = session.execute(
                """SELECT d.agent_id FROM agent_memory_dirty d
                   WHERE NOT EXISTS (
                     SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = d.agent_id)
                   GROUP BY d.agent_id ORDER BY min(d.enqueued_at), d.agent_id LIMIT ?""",
                (limit,),
            ).fetchall()
        return [str(agent) for (agent,) in rows]

    def list_dirty(self, agent_id: str, *, limit: int) -> Sequence[DirtySeed]:
        check_int(limit, "limit", minimum=1, maximum=MAX_DIRTY_BATCH)
        with self._read() as session:
            rows = session.execute(
                """SELECT d.memory_id, d.generation, d.claim_revision, d.enqueued_at
                   FROM agent_memory_dirty d
                   WHERE d.agent_id = ? AND NOT EXISTS (
                     SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = d.agent_id)
                   ORDER BY d.enqueued_at, d.memory_id LIMIT ?""",
                (agent_id, limit),
            ).fetchall()
            return _seeds(session, rows)

    def settle_dirty(self, agent_id: str, seeds: Sequence[DirtySeed]) -> int:
        with self._write(agent_id) as session:
            return settle(session, agent_id, seeds)

    def defer_dirty(self, agent_id: str, seeds: Sequence[DirtySeed], *, now: datetime) -> int:
        now = self._now(now)
        with self._write(agent_id) as session:
            latest = session.one(
                "SELECT max(enqueued_at) FROM agent_memory_dirty WHERE agent_id = ?", (agent_id,)
            )
            queued = [] if latest is None or latest[0] is None else [session.instant(latest[0])]
            at = deferred_at(now, queued)
            moved = 0
            for seed in seeds:
                moved += session.changed(
                    """UPDATE agent_memory_dirty SET enqueued_at = ?
                       WHERE agent_id = ? AND memory_id = ? AND generation = ?""",
                    (at, agent_id, seed.memory_id, seed.generation),
                )
            return moved

    def merge_claims(self, agent_id: str, request: MergeRequest, *, now: datetime) -> Claim:
        now = self._now(now)
        with self._write(agent_id) as session:
            return _merge(
                session, agent_id, request, now, policy=self._policy, new_id=self._claim_id
            )

    def insert_reflections(
        self,
        agent_id: str,
        drafts: Sequence[ClaimDraft],
        *,
        sources: Sequence[str],
        now: datetime,
    ) -> Sequence[InsertOutcome]:
        check_reflections(agent_id, drafts)
        prepared = [prepare(draft, self._policy) for draft in drafts]
        now = self._now(now)
        with self._write(agent_id) as session:
            outcomes = [
                insert_prepared(
                    session, item, origin=WriteOrigin.EXTRACTION, now=now, new_id=self._claim_id
                )
                for item in prepared
            ]
            for outcome in outcomes:
                if outcome.status is InsertStatus.INSERTED and outcome.claim is not None:
                    for source in dict.fromkeys(sources):
                        add_derivation(
                            session,
                            agent_id,
                            parent=source,
                            child=outcome.claim.id,
                            kind=DerivationKind.REFLECTION,
                            now=now,
                        )
            return outcomes

    def merged_into(self, agent_id: str, claim_id: str) -> Sequence[str]:
        with self._read() as session:
            return merged_rows(session, agent_id, claim_id)

    def archive_stale(self, agent_id: str, *, now: datetime, limit: int) -> Sequence[str]:
        check_int(limit, "limit", minimum=1)
        now = self._now(now)
        with self._write(agent_id) as session:
            ensure_not_fenced(session, agent_id)
            # Oldest anchors first: they are the ones the decay rule reaches first.
            rows = session.execute(
                f"""SELECT {CLAIM_SELECT} FROM agent_memory m
                    WHERE m.agent_id = ? AND {recallable("m.")} AND m.created_at < ?
                      AND m.conflict_state IS NULL AND {NOT_FENCED}
                    ORDER BY CASE WHEN m.last_accessed IS NULL THEN m.created_at
                             ELSE m.last_accessed END, m.id
                    LIMIT ?""",
                (agent_id, now - timedelta(days=90), _STALE_SCAN),
            ).fetchall()
            # The query leaves challenged targets out already (conflict_state IS NULL).
            stale = stale_ids(claims_of(session, rows), now, challenged=(), limit=limit)
            for claim_id in stale:
                session.execute(
                    """UPDATE agent_memory SET lifecycle_state = 'archived',
                         revision = revision + 1, updated_at = ?
                       WHERE agent_id = ? AND id = ?""",
                    (now, agent_id, claim_id),
                )
            if stale:
                audit.record(
                    session,
                    agent_id=agent_id,
                    event="memory/archive_stale",
                    actor="scheduler",
                    now=now,
                    refs={"archived": len(stale)},
                )
            return stale

    def record_event(
        self,
        agent_id: str,
        event: str,
        *,
        status: str,
        refs: dict[str, int | str | bool | None],
        now: datetime,
    ) -> None:
        now = self._now(now)
        with self._write(agent_id) as session:
            audit.record(
                session,
                agent_id=agent_id,
                event=event,
                actor="scheduler",
                now=now,
                refs=refs,
                status=status,
            )

    def last_event_at(self, agent_id: str, event: str, *, status: str) -> datetime | None:
        with self._read() as session:
            row = session.one(
                """SELECT max(created_at) FROM agent_memory_audit
                   WHERE agent_id = ? AND event_type = ? AND status = ?""",
                (agent_id, event, status),
            )
            return None if row is None or row[0] is None else session.instant(row[0])

    def retain_audit(self, agent_id: str, *, keep: int, limit: int) -> int:
        check_int(keep, "keep", minimum=0)
        check_int(limit, "limit", minimum=1)
        kinds = ", ".join("?" for _ in OPERATIONAL_EVENTS)
        with self._write(agent_id) as session:
            doomed = session.execute(
                f"""SELECT id FROM agent_memory_audit
                    WHERE agent_id = ? AND event_type IN ({kinds})
                    ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?""",
                (agent_id, *OPERATIONAL_EVENTS, limit, keep),
            ).fetchall()
            return sum(
                session.changed("DELETE FROM agent_memory_audit WHERE id = ?", (row_id,))
                for (row_id,) in doomed
            )
