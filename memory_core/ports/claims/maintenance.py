"""Maintenance: startup repair, audit retention and closing the store (R-TIME-4,
R-SCOPE-4, R-STORE-1) — host lifecycle calls, never on a turn — and `Consolidation`, the
background maintenance service's store calls: the dirty queue, merges, stale archiving and
its audit trail (R-MAINT-1, R-LINEAGE-1)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.claims import Claim, ClaimDraft, WriteOrigin
from memory_core.ports.claims.records import InsertOutcome

__all__ = [
    "MAX_DIRTY_BATCH",
    "Conflict",
    "Conflicts",
    "Consolidation",
    "DirtySeed",
    "MergeRequest",
    "PersonaState",
    "PersonaVersion",
    "PersonaView",
    "Personas",
    "RepairReport",
    "Resolution",
    "StoreMaintenance",
]


@attrs.frozen(kw_only=True)
class RepairReport:
    """Counts and ≤20 sample ids per repair; never content."""

    temporal_archived: int = 0
    internal_normalised: int = 0
    scope_fixed: int = 0
    scope_deleted: int = 0
    clear_tombstoned: int = 0  # deleted rows a pending clear covered: tombstoned, counted
    self_edges_removed: int = 0
    fts_rebuilt: bool = False
    sample_ids: tuple[str, ...] = ()


@runtime_checkable
class StoreMaintenance(Protocol):
    """What the host runs at startup and shutdown."""

    def repair(self, *, now: datetime) -> RepairReport:
        """Startup repair of temporal and scope metadata (R-TIME-4, R-SCOPE-4), in one
        transaction: corrupt temporal fields are normalised and the claim archived
        (persona/working: normalised to atemporal); scope pairs are repaired without ever
        widening, and unrecoverable narrow rows deleted (tombstoned and counted when a
        pending clear covers them); lineage self-edges are dropped; the FTS mirror is
        rebuilt when anything changed. A valid row is never altered."""
        ...

    def prune_audit(self, *, older_than: datetime) -> int:
        """Operational retention: drop housekeeping audit events older than `older_than`.
        Never touches lineage or user-visible events. Returns the number removed."""
        ...

    def close(self) -> None:
        """Release the store (a file-backed one checkpoints first). Idempotent; any later
        call raises StoreError."""
        ...


# --- consolidation: the dirty queue, merges, stale archiving, the maintenance audit ------

# Most seeds one listing returns (reference §7.7: the repository's cap).
MAX_DIRTY_BATCH = 256


@attrs.frozen(kw_only=True)
class DirtySeed:
    """One claim whose committed mutation has not been consolidated yet (R-MAINT-1).

    `generation` counts re-dirtyings: settling deletes the seed only while it still has the
    generation that was read, so a claim changed again during a pass keeps its seed."""

    memory_id: str
    generation: int
    claim_revision: int
    enqueued_at: datetime


@attrs.frozen(kw_only=True)
class MergeRequest:
    """Retire `retired_id` into `survivor_id` (both at the revisions the decision read),
    settling `settle` in the same transaction (reference §8.4). `content`: the model's
    merged wording for the survivor, when it gave one (`storage.consolidation.
    merged_wording` says when the store takes it)."""

    survivor_id: str
    survivor_revision: int
    retired_id: str
    retired_revision: int
    settle: tuple[DirtySeed, ...] = ()
    content: str | None = None


@runtime_checkable
class Consolidation(Protocol):
    """What the maintenance service asks of the store (R-MAINT-1, R-LINEAGE-1, §8.3–8.4)."""

    def dirty_agents(self, *, limit: int) -> Sequence[str]:
        """Agents with at least one dirty seed, the one with the oldest seed first; agents
        a clear fences are left out."""
        ...

    def list_dirty(self, agent_id: str, *, limit: int) -> Sequence[DirtySeed]:
        """Up to `limit` (1..MAX_DIRTY_BATCH) seeds ordered by (enqueued_at, memory_id);
        empty for an unknown agent and while a clear is pending."""
        ...

    def settle_dirty(self, agent_id: str, seeds: Sequence[DirtySeed]) -> int:
        """Delete each seed whose generation is still the one given (a re-dirtied seed
        survives); how many were deleted."""
        ...

    def defer_dirty(self, agent_id: str, seeds: Sequence[DirtySeed], *, now: datetime) -> int:
        """Move seeds that failed transiently behind every other seed of the agent:
        `enqueued_at = max(now, max(enqueued_at of the agent) + 1 ms)`, so a failing prefix
        never starves the work behind it. Only seeds still at their generation move."""
        ...

    def merge_claims(self, agent_id: str, request: MergeRequest, *, now: datetime) -> Claim:
        """One transaction: the survivor takes the higher importance, the category it lacks
        and confidence + 0.1 (`memory_core.storage.consolidation`), revision+1, and the
        request's merged `content` when the rule admits it (secret policy applied, not
        tombstoned, no other row's text; otherwise it keeps its own wording); the retired
        row is superseded by it (revision+1); a `merge` edge retired → survivor; the seeds
        settle. RevisionConflict when either row moved, is no longer recallable or is the
        target of an open challenge,
        ValidationError when they differ in scope or kind (nothing changes). Returns the
        survivor."""
        ...

    def insert_reflections(
        self,
        agent_id: str,
        drafts: Sequence[ClaimDraft],
        *,
        sources: Sequence[str],
        now: datetime,
    ) -> Sequence[InsertOutcome]:
        """Insert `drafts` (kind reflection) as an extraction would — duplicate and
        tombstone checks, never a release — and a `reflection` edge from every source to
        every inserted insight, all in one transaction (R-LINEAGE-1, §8.5). ValidationError
        for a draft of another owner or kind."""
        ...

    def merged_into(self, agent_id: str, claim_id: str) -> Sequence[str]:
        """Ids of rows merged (transitively) into `claim_id` and still stored, which a
        delete of `claim_id` forgets with it."""
        ...

    def archive_stale(self, agent_id: str, *, now: datetime, limit: int) -> Sequence[str]:
        """Archive up to `limit` recallable claims the decay rule calls stale
        (`memory_core.storage.consolidation.is_stale`); the archived ids."""
        ...

    def record_event(
        self,
        agent_id: str,
        event: str,
        *,
        status: str,
        refs: dict[str, int | str | bool | None],
        now: datetime,
    ) -> None:
        """Append one scheduler audit event (ids, counts and enums in `refs`, no content)."""
        ...

    def last_event_at(self, agent_id: str, event: str, *, status: str) -> datetime | None:
        """When the agent's newest `event` with `status` was recorded (cooldowns)."""
        ...

    def retain_audit(self, agent_id: str, *, keep: int, limit: int) -> int:
        """Operational retention (§8.8): delete at most `limit` operational events beyond
        the agent's newest `keep`; never lineage nor user-visible events."""
        ...


# --- conflicts: a CHALLENGE decision kept as a challenger against its target ------------


class Resolution(StrEnum):
    KEEP_TARGET = "keep_target"  # the challenger is retired into the target
    KEEP_CHALLENGER = "keep_challenger"  # the target (and sibling challengers) retire
    KEEP_BOTH = "keep_both"  # both stand: the challenger becomes an ordinary claim


@attrs.frozen(kw_only=True)
class Conflict:
    """An unresolved challenge: `challenger` (lifecycle conflicted, never recalled) against
    `target` (still live, flagged challenged)."""

    challenger: Claim
    target: Claim


@runtime_checkable
class Conflicts(Protocol):
    """Challenges as records (reference §7.8): written by the decision step, resolved by
    the user or the heavy maintenance pass."""

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
        """One transaction: the draft is stored as a challenger of `target_id` (lifecycle
        conflicted, linked to the target) and the target flagged challenged — with
        `insert`'s duplicate and tombstone checks (DUPLICATE / SUPPRESSED change nothing).
        RevisionConflict when the target moved or is not live; ValidationError when the
        draft's owner, scope or kind differs from the target's."""
        ...

    def list_conflicts(self, agent_id: str, *, limit: int) -> Sequence[Conflict]:
        """Open conflicts, oldest challenger first; none while a clear is pending."""
        ...

    def resolve_conflict(
        self,
        agent_id: str,
        challenger_id: str,
        resolution: Resolution,
        *,
        actor: str,
        now: datetime,
    ) -> Claim:
        """One transaction, with lineage and an audit event `memory/challenge_resolved`:
        KEEP_TARGET retires the challenger into the target (edge challenger → target);
        KEEP_CHALLENGER activates it and retires the target and every sibling challenger
        into it (edges → challenger); KEEP_BOTH activates it. The target's flag clears once
        no challenger is left. Returns the claim that stands for the fact (the target, or
        the challenger). NotFound when `challenger_id` is not an open challenger."""
        ...


# --- persona: the agent's self-model, drafted by maintenance, activated only by the user --


class PersonaState(StrEnum):
    DRAFT = "draft"  # proposed; the turn never reads it
    ACTIVE = "active"  # the one the turn reads (at most one per agent)
    REJECTED = "rejected"  # the user said no
    RETIRED = "retired"  # an earlier active version, replaced by an approval


@attrs.frozen(kw_only=True)
class PersonaVersion:
    id: str
    content: str
    state: PersonaState
    created_at: datetime
    updated_at: datetime


@attrs.frozen(kw_only=True)
class PersonaView:
    """The active persona and the pending draft, with how much the draft changes it."""

    active: PersonaVersion | None
    draft: PersonaVersion | None
    change_ratio: float | None  # None without a draft
    needs_review: bool


@runtime_checkable
class Personas(Protocol):
    """Persona rows (kind persona, internal: never listed, searched or embedded). No call
    but `approve_persona` and the user's `rollback_persona` make a version active
    (reference §8.6)."""

    def persona(self, agent_id: str) -> PersonaView:
        """The agent's active version and pending draft (either may be None)."""
        ...

    def draft_persona(self, agent_id: str, content: str, *, now: datetime) -> PersonaVersion | None:
        """Store `content` (secret policy applied) as the agent's draft; None — nothing
        stored — when a draft is already pending or the text equals the active one."""
        ...

    def approve_persona(self, agent_id: str, draft_id: str, *, now: datetime) -> PersonaVersion:
        """The draft becomes active and the previous active version retired, in one
        transaction (audit `persona/approve`). NotFound unless `draft_id` is the pending
        draft."""
        ...

    def reject_persona(self, agent_id: str, draft_id: str, *, now: datetime) -> PersonaVersion:
        """The draft is rejected; the active version is untouched. NotFound unless
        `draft_id` is the pending draft."""
        ...

    def rollback_persona(self, agent_id: str, *, now: datetime) -> PersonaVersion:
        """The user's undo of an approval, in one transaction (audit `persona/rollback`):
        the active version is rejected and the newest retired one active again; a pending
        draft is untouched. Repeated, it walks further back. NotFound unless the agent has
        an active and a retired version. Returns the version now active."""
        ...
