"""`FakeForgetting`: the `Forgetting` role in memory — selective delete, the agent clear in
batches, retirement and the checkpoint, trivially physical here (R-FORGET-1/3/4, R-PRIV-3).
Tombstones are the identities `memory_core.storage.tombstones` names, hashes only."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs

from memory_contracts.fake_claim_table import TABLES, FakeStoreBase
from memory_contracts.fake_conflicts import settle_removed
from memory_contracts.fake_maintenance import merged_ids
from memory_core.domain.errors import NotFound, ValidationError
from memory_core.ports.claims import ClearPhase, ClearProgress, DeleteOutcome
from memory_core.storage.conflicts import Removal
from memory_core.storage.drafts import stored_time
from memory_core.storage.tombstones import identities_of_claim

__all__ = ["MAX_CLEAR_BATCH", "FakeForgetting"]

MAX_CLEAR_BATCH = 256


class FakeForgetting(FakeStoreBase):
    def delete(self, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
        with self._open().transaction() as table:
            claim = table.owned(agent_id, claim_id)
            # What was merged into the claim is the same fact: it is forgotten with it.
            merged = [table.rows[i] for i in merged_ids(table, agent_id, claim_id)]
            written = 0
            at = stored_time(now, "now")
            for victim in (claim, *merged):
                settle_removed(table, agent_id, victim.id, Removal.DELETE, at)
                written += table.bury(agent_id, identities_of_claim(victim))
                del table.rows[victim.id]
        return DeleteOutcome(claim_id=claim_id, tombstones_written=written)

    def begin_clear(self, agent_id: str, *, now: datetime) -> ClearProgress:
        at = stored_time(now, "now")
        job = ClearProgress(
            agent_id=agent_id, phase=ClearPhase.CLAIMS, removed_count=0, created_at=at
        )
        return self._open().jobs.setdefault(agent_id, job)  # an existing job stands

    def run_clear_batch(self, agent_id: str, *, batch_size: int = MAX_CLEAR_BATCH) -> ClearProgress:
        if isinstance(batch_size, bool) or not 1 <= batch_size <= MAX_CLEAR_BATCH:
            raise ValidationError("batch_size", f"must be in 1..{MAX_CLEAR_BATCH}")
        job = self._open().jobs.get(agent_id)
        if job is None:
            raise NotFound("no clear job for this agent")
        if job.phase is not ClearPhase.CLAIMS:
            return job
        with self._open().transaction() as table:
            rows = [c for c in table.rows.values() if c.agent_id == agent_id][:batch_size]
            for claim in rows:
                if not claim.kind.is_internal:  # internal rows have no identity
                    table.bury(agent_id, identities_of_claim(claim))
                del table.rows[claim.id]
            phase = ClearPhase.VECTORS if len(rows) < batch_size else ClearPhase.CLAIMS
            if phase is ClearPhase.VECTORS:  # the last batch: lineage goes with the claims
                table.drop_owner(agent_id, "edges", "personas")
            job = attrs.evolve(job, phase=phase, removed_count=job.removed_count + len(rows))
            table.jobs[agent_id] = job
        return attrs.evolve(job, batch_removed=len(rows))

    def finish_clear(self, agent_id: str) -> None:
        job = self._open().jobs.get(agent_id)
        if job is not None and job.phase is not ClearPhase.VECTORS:
            raise ValidationError("phase", "the clear has not finished deleting claims")
        self._open().jobs.pop(agent_id, None)

    def pending_clears(self) -> Sequence[ClearProgress]:
        return sorted(self._open().jobs.values(), key=lambda j: (j.created_at, j.agent_id))

    def retire_agent(self, agent_id: str) -> None:
        self._open().drop_owner(agent_id, *TABLES)

    def checkpoint(self) -> None:
        """A no-op: nothing is written anywhere, so a forget is physical at once."""
        self._open()
