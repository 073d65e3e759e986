"""`FakeDirtyQueue`: the dirty queue of the `Consolidation` role in memory (R-MAINT-1,
reference §7.7).

The SQL stores fill their dirty queue by triggers; the fake has none, so it reconciles the
queue with the rows whenever the role is asked: a row of a recallable kind whose revision
or embedding changed since it was last seen — or that is gone — gets its seed upserted
(generation + 1), exactly the seeds the triggers would have left behind by then.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs

from memory_contracts.fake_claim_table import ClaimTable, FakeStoreBase
from memory_core.domain.claims import Claim
from memory_core.domain.validation import check_int
from memory_core.ports.claims import MAX_DIRTY_BATCH, DirtySeed
from memory_core.storage.consolidation import deferred_at
from memory_core.storage.drafts import stored_time

__all__ = ["FakeDirtyQueue", "sync"]


def _signature(claim: Claim) -> tuple[object, ...]:
    return (claim.revision, claim.embedding_state, claim.embedding)


def sync(table: ClaimTable) -> None:
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


class FakeDirtyQueue(FakeStoreBase):
    def _synced(self) -> ClaimTable:
        table = self._open()
        sync(table)
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
