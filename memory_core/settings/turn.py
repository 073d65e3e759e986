"""The turn runtime: the soft deadline of a turn's contribution, its bookkeeping and cache,
and the stored working-memory projection the turn reads (R-READ-1, R-READ-9)."""

from __future__ import annotations

import attrs

from memory_core.settings.fields import doc, non_negative, positive

__all__ = ["TurnSettings"]


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class TurnSettings:
    prepare_turn_deadline_ms: int = attrs.field(
        default=4_000,
        validator=positive,
        metadata=doc("Soft deadline of a turn's contribution; past it the turn proceeds without."),
    )
    turn_bookkeeping_seconds: float = attrs.field(
        default=30.0,
        validator=positive,
        metadata=doc("Deadline of a turn's view anchor and access count, which may outlive it."),
    )
    turn_cache_turns: int = attrs.field(
        default=128,
        validator=positive,
        metadata=doc("Contributions kept per session for retries and refreshes of a turn."),
    )
    working_source_limit: int = attrs.field(
        default=200,
        validator=positive,
        metadata=doc("Newest agent-scope claims the working-memory projection considers."),
    )
    working_refresh_debounce_seconds: float = attrs.field(
        default=0.1,
        validator=non_negative,
        metadata=doc("Quiet time after an agent's writes before its projection is rebuilt."),
    )
    working_refresh_seconds: float = attrs.field(
        default=5.0,
        validator=positive,
        metadata=doc("Deadline of one background rebuild or store of a working projection."),
    )
