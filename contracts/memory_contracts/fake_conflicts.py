"""`FakeConflicts`: the `Conflicts` role in memory (reference §7.8). The domain `Claim`
carries no conflict link, so the fake keeps the links beside the rows: challenger id →
target id, per owner; a target is challenged while any link points at it. What a
resolution or a removal moves is `memory_core.storage.conflicts`'s decision."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memory_contracts.fake_claim_table import ClaimTable, FakeStoreBase
from memory_core.domain.claims import Claim, ClaimDraft, Lifecycle, WriteOrigin
from memory_core.domain.errors import ClearInProgress, NotFound, RevisionConflict, ValidationError
from memory_core.domain.validation import check_int
from memory_core.ports.claims import Conflict, DerivationKind, InsertOutcome, Resolution
from memory_core.ports.claims import InsertStatus as Status
from memory_core.storage.conflicts import LinkChange, Removal, removal_change, resolution_change
from memory_core.storage.drafts import stored_time

__all__ = ["FakeConflicts", "apply_change", "settle_removed"]


class FakeConflicts(FakeStoreBase):
    def challenge(
        self,
        agent_id: str,
        target_id: str,
        draft: ClaimDraft,
        *,
        expected_revision: int,
        origin: WriteOrigin,
        now: datetime,
    ) -> InsertOutcome:
        if draft.agent_id != agent_id:
            raise ValidationError("agent_id", "the draft belongs to another agent")
        at = stored_time(now, "now")
        with self._open().transaction() as table:
            if agent_id in table.jobs:
                raise ClearInProgress("a clear job is pending for this agent")
            target = table.find(agent_id, target_id)
            if target is None or target.revision != expected_revision or not target.is_recallable:
                raise RevisionConflict(f"claim {target_id} changed since the challenge was decided")
            if draft.scope != target.scope:
                raise ValidationError("scope", "a challenger must share its target's scope")
            if draft.kind is not target.kind:
                raise ValidationError("kind", "a challenger must share its target's kind")
            insert: Any = getattr(self, "insert")  # noqa: B009 -- the records role's, composed
            outcome: InsertOutcome = insert(draft, origin=origin, now=at)
            if outcome.status is not Status.INSERTED or outcome.claim is None:
                return outcome
            challenger = table.put(outcome.claim, lifecycle=Lifecycle.CONFLICTED)
            table.conflicts[(agent_id, challenger.id)] = target.id
        return InsertOutcome(status=Status.INSERTED, claim=challenger)

    def list_conflicts(self, agent_id: str, *, limit: int) -> Sequence[Conflict]:
        check_int(limit, "limit", minimum=1)
        table = self._open()
        found = []
        for (owner, challenger_id), target_id in table.conflicts.items():
            challenger = table.find(agent_id, challenger_id) if owner == agent_id else None
            target = table.find(agent_id, target_id)
            if challenger is not None and target is not None:
                found.append(Conflict(challenger=challenger, target=target))
        found.sort(key=lambda c: (c.challenger.created_at, c.challenger.id))
        return found[:limit]

    def resolve_conflict(
        self,
        agent_id: str,
        challenger_id: str,
        resolution: Resolution,
        *,
        actor: str,
        now: datetime,
    ) -> Claim:
        resolution = Resolution(resolution)
        at = stored_time(now, "now")
        with self._open().transaction() as table:
            if agent_id in table.jobs:
                raise ClearInProgress("a clear job is pending for this agent")
            target_id = table.conflicts.get((agent_id, challenger_id))
            if target_id is None or table.find(agent_id, challenger_id) is None:
                raise NotFound(f"no open challenge {challenger_id} for this agent")
            standing, change = resolution_change(
                resolution, challenger_id, target_id, _challengers_of(table, agent_id, target_id)
            )
            apply_change(table, agent_id, change, at)
            return table.rows[standing]


def apply_change(table: ClaimTable, agent_id: str, change: LinkChange, at: datetime) -> None:
    """Execute `change` on the rows; the challenged flag is derived from the links here."""
    for claim_id in change.activate:
        table.bump(table.rows[claim_id], at, lifecycle=Lifecycle.ACTIVE)
    for claim_id, successor in change.archive:
        table.bump(table.rows[claim_id], at, lifecycle=Lifecycle.ARCHIVED, superseded_by=successor)
    for claim_id, successor in change.supersede:
        table.bump(table.rows[claim_id], at, superseded_by=successor)
    for claim_id in change.unlink:
        table.conflicts.pop((agent_id, claim_id), None)
    for parent, child in change.edges:
        table.derive(table.rows[parent], child, DerivationKind.SUPERSEDE, at)


def settle_removed(
    table: ClaimTable, agent_id: str, claim_id: str, how: Removal, at: datetime
) -> None:
    """Settle the challenge `claim_id` takes part in, before it is deleted or retired."""
    target = table.conflicts.get((agent_id, claim_id))
    change = removal_change(
        claim_id,
        how,
        challengers=_challengers_of(table, agent_id, claim_id),
        target=target,
        siblings=() if target is None else _challengers_of(table, agent_id, target),
    )
    apply_change(table, agent_id, change, at)


def _challengers_of(table: ClaimTable, agent_id: str, target_id: str) -> list[str]:
    """Open challengers of `target_id`, oldest first (the SQL stores' order)."""
    found = [
        table.rows[c]
        for (owner, c), t in table.conflicts.items()
        if (owner, t) == (agent_id, target_id)
    ]
    return [c.id for c in sorted(found, key=lambda c: (c.created_at, c.id))]
