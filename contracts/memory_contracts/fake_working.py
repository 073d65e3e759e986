"""`FakeWorkingProjections`: the `WorkingProjections` role in memory.

The SQL stores move an agent's generation by triggers on every change to its Agent-scope
semantic, episodic and reflection rows. The fake has no triggers, so it derives the same
thing: the fingerprint of what a projection reads of those rows (access counts and
embedding state excluded, as in the SQL triggers), and the generation moves each time a
call finds the fingerprint changed since the last call. Two calls around any mutation see
different generations, which is all the role promises."""

from __future__ import annotations

from typing import Any

import attrs

from memory_contracts.fake_claim_table import ClaimTable, FakeStoreBase
from memory_core.domain.claims import Claim
from memory_core.domain.errors import ClearInProgress
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.validation import check_instance, check_int
from memory_core.ports.claims import StoredWorking, WorkingSnapshot

__all__ = ["FakeWorkingProjections"]


@attrs.frozen
class _Row:
    fingerprint: tuple[Any, ...]
    generation: int
    snapshot: WorkingSnapshot | None = None


def _fingerprint(table: ClaimTable, agent_id: str) -> tuple[Any, ...]:
    def seen(claim: Claim) -> tuple[Any, ...]:
        return (
            claim.id,
            claim.kind,
            claim.content,
            claim.importance,
            claim.revision,
            claim.created_at,
            claim.lifecycle,
            claim.superseded_by,
            claim.temporal,
        )

    rows = table.rows.values()
    projected = (c for c in rows if c.agent_id == agent_id and c.scope.is_agent)
    return tuple(sorted(seen(c) for c in projected if not c.kind.is_internal))


class FakeWorkingProjections(FakeStoreBase):
    def _rows(self) -> dict[str, _Row]:
        # Created on first use: the base's constructor is shared by every role fake.
        rows: dict[str, _Row] = self.__dict__.setdefault("_working_rows", {})
        return rows

    def _working_row(self, agent_id: str) -> _Row:
        rows = self._rows()
        fingerprint = _fingerprint(self._open(), agent_id)
        row = rows.get(agent_id, _Row(fingerprint=(), generation=0))
        if row.fingerprint != fingerprint:  # a mutation since: the snapshot goes with it
            row = _Row(fingerprint=fingerprint, generation=row.generation + 1)
        rows[agent_id] = row
        return row

    def working_projection(self, agent_id: str) -> StoredWorking:
        validate_agent_id(agent_id)
        row = self._working_row(agent_id)
        fenced = agent_id in self._open().jobs
        return StoredWorking(generation=row.generation, snapshot=None if fenced else row.snapshot)

    def store_working_projection(
        self, agent_id: str, snapshot: WorkingSnapshot, *, generation: int
    ) -> bool:
        validate_agent_id(agent_id)
        check_instance(snapshot, WorkingSnapshot, "snapshot")
        check_int(generation, "generation", minimum=0)
        if agent_id in self._open().jobs:
            raise ClearInProgress("a clear job is pending for this agent")
        row = self._working_row(agent_id)
        if row.generation != generation:
            return False
        self._rows()[agent_id] = attrs.evolve(row, snapshot=snapshot)
        return True
