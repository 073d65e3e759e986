"""The stored working projection: one row per agent that the turn reads instead of listing
and rendering claims (R-READ-9, R-MAINT-3, R-STORE-2; reference §8.7).

The row is a projection, never a source: it is built from the agent's authoritative
Agent-scope claims and can be dropped and rebuilt at any time. What makes it trustworthy is
the agent's *source generation*, a counter the store moves in the same transaction as every
change to an Agent-scope semantic, episodic or reflection claim of the agent — insert,
supersede, edit, archive, restore, merge, delete, clear, retirement, repair, however the
change is made. The counter is not moved by access accounting or embedding state, which a
turn writes and the projection does not render (access counts only break ties between
equally important lines; the next rebuild picks them up).

A stored snapshot is valid for the generation it was stored at only: the store drops it
(text and entries, so no forgotten content outlives its claim in this row) in the very
transaction that moves the generation. A rebuild reads the generation first and the claims
after, and stores with compare-and-set on the generation it read: a rebuild that lost a race
with any mutation is discarded, never written over a newer state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.claims import ClaimKind
from memory_core.domain.temporal_policy import TemporalStatus, WorkingSection

__all__ = [
    "HiddenClaim",
    "ProjectionEntry",
    "StoredWorking",
    "WorkingProjections",
    "WorkingSnapshot",
]


@attrs.frozen(kw_only=True, slots=True)
class ProjectionEntry:
    """One claim shown in the projection, and where."""

    id: str
    section: WorkingSection = attrs.field(converter=WorkingSection)
    status: TemporalStatus = attrs.field(converter=TemporalStatus)


@attrs.frozen(kw_only=True, slots=True)
class HiddenClaim:
    """A claim an active suppress_topic kept out of the projection: its id and kind only,
    for the turn's manifest (R-DIR-2)."""

    id: str
    kind: ClaimKind = attrs.field(converter=ClaimKind)


@attrs.frozen(kw_only=True, slots=True)
class WorkingSnapshot:
    """A rendered projection as stored: what a turn needs to show it.

    `recipe` fingerprints everything beyond the claims that shaped it — the token budget,
    the source limit, the temporal policy and the suppress topics in force — so a reader
    with other settings or directives knows it is not theirs. `next_refresh_at` is the
    earliest interval bound after `built_at` among its candidates: from then on the snapshot
    is out of date by time alone."""

    text: str | None
    entries: tuple[ProjectionEntry, ...] = attrs.field(converter=tuple)
    estimated_tokens: int
    next_refresh_at: datetime | None
    built_at: datetime
    recipe: str
    hidden: tuple[HiddenClaim, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen(kw_only=True, slots=True)
class StoredWorking:
    """The agent's current source generation and the snapshot stored for it, if any."""

    generation: int
    snapshot: WorkingSnapshot | None


@runtime_checkable
class WorkingProjections(Protocol):
    """The working projection's row. Both calls are one statement each."""

    def working_projection(self, agent_id: str) -> StoredWorking:
        """The agent's generation and its stored snapshot. An agent never seen, or fenced by
        a pending clear, reads as no snapshot (its generation is still reported)."""
        ...

    def store_working_projection(
        self, agent_id: str, snapshot: WorkingSnapshot, *, generation: int
    ) -> bool:
        """Store `snapshot`, built from claims read after the agent's generation was read as
        `generation`, if the generation is still that: True when stored, False when a
        mutation moved it since (the snapshot is discarded). Raises ClearInProgress while a
        clear fences the agent, ValidationError naming a malformed argument."""
        ...
