"""Supersede and manual edit: which rows may change, and what becomes of the successor
(R-LINEAGE-1, R-SCOPE-3).

A mutation names the owner's non-internal row at the revision it read. Supersede never
crosses owners or scopes and retires a row only once. Its successor is a new row, or a
retired row of the draft's provenance revived (Paris → Berlin → Paris makes the first row
live again), or — when that row is archived or in conflict — nothing: the user's forget
stands and the old row is kept unless the twin is itself live.
"""

from __future__ import annotations

from enum import StrEnum

import attrs

from memory_core.domain.claims import Claim, ClaimDraft, ClaimKind, Lifecycle
from memory_core.domain.errors import RevisionConflict, ScopeError, ValidationError

__all__ = [
    "Successor",
    "SuccessorDecision",
    "check_mutable",
    "check_revision",
    "check_supersede",
    "decide_successor",
]


def check_mutable(kind: ClaimKind | str) -> None:
    """Internal rows (persona, working) belong to projections; no port call edits them."""
    kind = ClaimKind(kind)
    if kind.is_internal:
        raise ValidationError("kind", f"{kind.value} rows are internal and managed by projections")


def check_revision(claim_id: str, revision: int, expected: int) -> None:
    """Compare-and-set on the row's revision: a stale writer gets RevisionConflict."""
    if revision != expected:
        raise RevisionConflict(f"claim {claim_id} is at revision {revision}, not {expected}")


def check_supersede(old: Claim, draft: ClaimDraft, *, expected_revision: int) -> None:
    """What supersede checks about the row it retires, in the order every store reports it.
    (The owner check — `draft.agent_id` against the caller — runs before the row is read.)"""
    if old.scope != draft.scope:
        raise ScopeError("scope", "supersede never crosses scopes")
    check_revision(old.id, old.revision, expected_revision)
    if old.superseded_by is not None:
        raise RevisionConflict(f"claim {old.id} is already superseded")


class Successor(StrEnum):
    INSERT = "insert"  # no row has the draft's key (or only the old row itself): insert
    REVIVE = "revive"  # a retired, still active row has it: make that row live again
    KEEP = "keep"  # an archived, conflicted or live row has it: it is the duplicate


@attrs.frozen(kw_only=True)
class SuccessorDecision:
    action: Successor
    retire_old: bool  # whether the old row is superseded by the outcome's claim


def decide_successor(old_id: str, existing: Claim | None) -> SuccessorDecision:
    """The successor of `old_id`, given the row already holding the draft's provenance key.

    Even on INSERT/REVIVE the store retires the old row only if the outcome has a claim that
    is not the old row itself (a suppressed write retires nothing)."""
    if existing is None or existing.id == old_id:
        return SuccessorDecision(action=Successor.INSERT, retire_old=True)
    if existing.lifecycle is Lifecycle.ACTIVE and existing.superseded_by is not None:
        return SuccessorDecision(action=Successor.REVIVE, retire_old=True)
    return SuccessorDecision(action=Successor.KEEP, retire_old=existing.is_recallable)
