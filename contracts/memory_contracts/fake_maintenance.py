"""`FakeConsolidation`: the `Consolidation` role in memory (R-MAINT-1, reference §7.7–8.4):
merges, reflections, stale archiving and the maintenance audit trail over the dirty queue
of `fake_dirty_queue`. What each decides is `memory_core.storage.consolidation`'s."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import attrs

from memory_contracts.fake_claim_table import ClaimTable
from memory_contracts.fake_dirty_queue import FakeDirtyQueue, sync
from memory_core.domain.claims import (
    Claim,
    ClaimDraft,
    EmbeddingState,
    Lifecycle,
    WriteOrigin,
)
from memory_core.domain.errors import ClearInProgress
from memory_core.domain.validation import check_int
from memory_core.ports.claims import (
    AuditEvent,
    Derivation,
    DerivationKind,
    InsertOutcome,
    InsertStatus,
    MergeRequest,
)
from memory_core.storage.consolidation import (
    OPERATIONAL_EVENTS,
    check_merge,
    check_reflections,
    merged_wording,
    prepared_wording,
    stale_ids,
    survivor_fields,
)
from memory_core.storage.drafts import PreparedDraft, stored_time

__all__ = ["FakeConsolidation", "merged_ids"]

_sequence = itertools.count(1)


def _challenged(table: ClaimTable, agent_id: str) -> set[str]:
    """Targets of the owner's open challenges."""
    return {target for (owner, _), target in table.conflicts.items() if owner == agent_id}


def merged_ids(table: ClaimTable, agent_id: str, claim_id: str) -> list[str]:
    """Rows merged (transitively) into `claim_id`, still stored and retired into it."""
    found: list[str] = []
    frontier = [claim_id]
    while frontier:
        child = frontier.pop(0)
        for (owner, parent, edge_child, kind), _ in sorted(table.edges.items()):
            row = table.rows.get(parent)
            if (owner, edge_child, kind) != (agent_id, child, DerivationKind.MERGE):
                continue
            if row is None or row.superseded_by != child or parent in found or parent == claim_id:
                continue
            found.append(parent)
            frontier.append(parent)
    return found


class FakeConsolidation(FakeDirtyQueue):
    def merge_claims(self, agent_id: str, request: MergeRequest, *, now: datetime) -> Claim:
        at = stored_time(now, "now")
        table = self._synced()
        with table.transaction():
            if agent_id in table.jobs:
                raise ClearInProgress("a clear job is pending for this agent")
            survivor, retired = check_merge(
                request,
                table.find(agent_id, request.survivor_id),
                table.find(agent_id, request.retired_id),
                challenged=_challenged(table, agent_id),
            )
            fields = survivor_fields(survivor, retired)
            wording = self._wording(table, survivor, request.content)
            touched = [survivor.id, retired.id]
            if wording is not None:
                # The former wording stays as a row retired into the survivor, so deleting
                # the survivor tombstones that exact text too (R-FORGET-1).
                former = attrs.evolve(
                    survivor,
                    id=self._new_id("mem"),
                    superseded_by=survivor.id,
                    updated_at=at,
                    embedding_state=EmbeddingState.PENDING,
                    embedding=None,
                )
                table.rows[former.id] = former
                table.derive(former, survivor.id, DerivationKind.MERGE, at)
                touched.append(former.id)
                survivor = table.put(
                    survivor,
                    content=wording.content,
                    canonical_content=wording.canonical,
                    provenance_key=wording.key,
                )
            merged = table.bump(
                survivor,
                at,
                importance=fields.importance,
                confidence=fields.confidence,
                category=fields.category,
                embedding_state=EmbeddingState.PENDING,
                embedding=None,
            )
            table.bump(retired, at, superseded_by=survivor.id)
            table.derive(retired, survivor.id, DerivationKind.MERGE, at)
            sync(table)
            for claim_id in touched:
                table.dirty.pop((agent_id, claim_id), None)
            for seed in request.settle:
                current = table.dirty.get((agent_id, seed.memory_id))
                if current is not None and current.generation == seed.generation:
                    del table.dirty[(agent_id, seed.memory_id)]
            refs: dict[str, int | str | bool | None] = {
                "retired": retired.id,
                "wording": "kept" if wording is None else "merged",
            }
            self._event(table, agent_id, "memory/merge", "completed", refs, at)
        return merged

    def _wording(
        self, table: ClaimTable, survivor: Claim, content: str | None
    ) -> PreparedDraft | None:
        prepared = prepared_wording(survivor, content, self._policy)
        if prepared is None:
            return None
        owner = table.by_key(survivor.agent_id, prepared.key)
        return merged_wording(
            prepared,
            survivor,
            tombstoned=table.tombstoned(survivor.agent_id, prepared.identities),
            key_owner=None if owner is None else owner.id,
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
        at = stored_time(now, "now")
        insert_many: Any = getattr(self, "insert_many")  # noqa: B009 -- the records role's
        with self._open().transaction() as table:
            outcomes: Sequence[InsertOutcome] = insert_many(
                drafts, origin=WriteOrigin.EXTRACTION, now=at
            )
            for outcome in outcomes:
                if outcome.status is InsertStatus.INSERTED and outcome.claim is not None:
                    for source in dict.fromkeys(sources):
                        edge = Derivation(
                            parent_id=source,
                            child_id=outcome.claim.id,
                            kind=DerivationKind.REFLECTION,
                            created_at=at,
                        )
                        key = (agent_id, source, outcome.claim.id, DerivationKind.REFLECTION)
                        table.edges.setdefault(key, edge)
        return outcomes

    def merged_into(self, agent_id: str, claim_id: str) -> Sequence[str]:
        return merged_ids(self._open(), agent_id, claim_id)

    def archive_stale(self, agent_id: str, *, now: datetime, limit: int) -> Sequence[str]:
        check_int(limit, "limit", minimum=1)
        at = stored_time(now, "now")
        table = self._open()
        if agent_id in table.jobs:
            raise ClearInProgress("a clear job is pending for this agent")
        stale = stale_ids(
            table.visible(agent_id), at, challenged=_challenged(table, agent_id), limit=limit
        )
        for claim_id in stale:
            table.bump(table.rows[claim_id], at, lifecycle=Lifecycle.ARCHIVED)
        if stale:
            refs: dict[str, int | str | bool | None] = {"archived": len(stale)}
            self._event(table, agent_id, "memory/archive_stale", "completed", refs, at)
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
        self._event(self._open(), agent_id, event, status, refs, stored_time(now, "now"))

    def last_event_at(self, agent_id: str, event: str, *, status: str) -> datetime | None:
        times = [
            e.created_at
            for (owner, _), e in self._open().events.items()
            if owner == agent_id and (e.event, e.status) == (event, status)
        ]
        return max(times, default=None)

    def list_audit(
        self, agent_id: str, *, limit: int, memory_ids: Sequence[str] | None = None
    ) -> Sequence[AuditEvent]:
        check_int(limit, "limit", minimum=1)
        about = None if memory_ids is None else set(memory_ids)
        owned = [
            (k, e)
            for k, e in self._open().events.items()
            if k[0] == agent_id and (about is None or e.memory_id in about)
        ]
        owned.sort(key=lambda item: (item[1].created_at, item[0][1]), reverse=True)
        return [event for _, event in owned[:limit]]

    def retain_audit(self, agent_id: str, *, keep: int, limit: int) -> int:
        check_int(keep, "keep", minimum=0)
        check_int(limit, "limit", minimum=1)
        events = self._open().events
        owned = [
            (k, e) for k, e in events.items() if k[0] == agent_id and e.event in OPERATIONAL_EVENTS
        ]
        owned.sort(key=lambda item: (item[1].created_at, item[0][1]), reverse=True)
        doomed = owned[keep : keep + limit]
        for key, _ in doomed:
            del events[key]
        return len(doomed)

    @staticmethod
    def _event(  # noqa: PLR0917 -- a private helper called with the event's fields in order
        table: ClaimTable,
        agent_id: str,
        event: str,
        status: str,
        refs: dict[str, int | str | bool | None],
        at: datetime,
    ) -> None:
        table.events[(agent_id, next(_sequence))] = AuditEvent(
            event=event, actor="scheduler", status=status, memory_id=None, refs=refs, created_at=at
        )
