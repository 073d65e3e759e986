"""`FakeConsolidation`: the `Consolidation` role in memory (R-MAINT-1, reference §7.7–8.4).

The SQL stores fill their dirty queue by triggers; the fake has none, so it reconciles the
queue with the rows whenever the role is asked: a row of a recallable kind whose revision
or embedding changed since it was last seen — or that is gone — gets its seed upserted
(generation + 1), exactly the seeds the triggers would have left behind by then.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import attrs

from memory_contracts.fake_claim_table import ClaimTable, FakeStoreBase
from memory_core.domain.claims import (
    Claim,
    ClaimDraft,
    ClaimKind,
    EmbeddingState,
    Lifecycle,
    WriteOrigin,
)
from memory_core.domain.errors import ClearInProgress, ValidationError
from memory_core.domain.validation import check_int
from memory_core.ports.claims import (
    MAX_DIRTY_BATCH,
    AuditEvent,
    Derivation,
    DerivationKind,
    DirtySeed,
    InsertOutcome,
    InsertStatus,
    MergeRequest,
)
from memory_core.storage.consolidation import (
    OPERATIONAL_EVENTS,
    check_merge,
    deferred_at,
    merged_wording,
    prepared_wording,
    stale_ids,
    survivor_fields,
)
from memory_core.storage.drafts import PreparedDraft, stored_time

__all__ = ["FakeConsolidation", "merged_ids"]

_sequence = itertools.count(1)


def _signature(claim: Claim) -> tuple[object, ...]:
    return (claim.revision, claim.embedding_state, claim.embedding)


def _sync(table: ClaimTable) -> None:
    """Upsert the seeds the SQL triggers would have written since the last call."""
    for claim in table.rows.values():
        key = (claim.agent_id, claim.id)
        if claim.kind.is_internal:
            continue
        seen = table.seen.get(key)
        if seen is None or seen[0] != _signature(claim):
            _upsert(table, key, claim.revision, claim.updated_at)
            table.seen[key] = (_signature(claim), claim.updated_at)
    for key in [k for k in table.seen if k[1] not in table.rows]:
        (revision, *_), updated = table.seen.pop(key)
        if key[0] not in table.jobs:  # a clear drops the dirty state, as in SQL
            _upsert(table, key, revision, updated)  # type: ignore[arg-type]


def _upsert(table: ClaimTable, key: tuple[str, str], revision: int, when: datetime) -> None:
    old = table.dirty.get(key)
    table.dirty[key] = DirtySeed(
        memory_id=key[1],
        generation=1 if old is None else old.generation + 1,
        claim_revision=revision,
        enqueued_at=when if old is None else max(old.enqueued_at, when),
    )


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


class FakeConsolidation(FakeStoreBase):
    def _synced(self) -> ClaimTable:
        table = self._open()
        _sync(table)
        return table

    def dirty_agents(self, *, limit: int) -> Sequence[str]:
        check_int(limit, "limit", minimum=1)
        table = self._synced()
        oldest: dict[str, datetime] = {}
        for (agent, _), seed in table.dirty.items():
            if agent not in table.jobs:
                oldest[agent] = min(oldest.get(agent, seed.enqueued_at), seed.enqueued_at)
        return sorted(oldest, key=lambda agent: (oldest[agent], agent))[:limit]

    def list_dirty(self, agent_id: str, *, limit: int) -> Sequence[DirtySeed]:
        check_int(limit, "limit", minimum=1, maximum=MAX_DIRTY_BATCH)
        table = self._synced()
        if agent_id in table.jobs:
            return []
        seeds = [seed for (agent, _), seed in table.dirty.items() if agent == agent_id]
        return sorted(seeds, key=lambda s: (s.enqueued_at, s.memory_id))[:limit]

    def settle_dirty(self, agent_id: str, seeds: Sequence[DirtySeed]) -> int:
        table = self._synced()
        settled = 0
        for seed in seeds:
            key = (agent_id, seed.memory_id)
            current = table.dirty.get(key)
            if current is not None and current.generation == seed.generation:
                del table.dirty[key]
                settled += 1
        return settled

    def defer_dirty(self, agent_id: str, seeds: Sequence[DirtySeed], *, now: datetime) -> int:
        table = self._synced()
        at = stored_time(now, "now")
        owned = [s.enqueued_at for (agent, _), s in table.dirty.items() if agent == agent_id]
        at = deferred_at(at, owned)
        moved = 0
        for seed in seeds:
            key = (agent_id, seed.memory_id)
            current = table.dirty.get(key)
            if current is not None and current.generation == seed.generation:
                table.dirty[key] = attrs.evolve(current, enqueued_at=at)
                moved += 1
        return moved

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
            _sync(table)
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
        for draft in drafts:
            if draft.agent_id != agent_id:
                raise ValidationError("agent_id", "a reflection belongs to the agent it reflects")
            if draft.kind is not ClaimKind.REFLECTION:
                raise ValidationError("kind", "insights are reflection claims")
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
