"""The vocabulary of terminal ingestion: turn outcomes, pass outcomes, policy and reports.

Values only; the runtime that uses them is `memory_core.services.write.ingestion.service`.
Reports carry ids, counts, order_seqs and exception type names — never content.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum

import attrs

from memory_core.services.write.chunking import ChunkLimits
from memory_core.services.write.decision.service import WriteReport

__all__ = [
    "ChunkRecord",
    "CommitHook",
    "IngestionOutcome",
    "IngestionPolicy",
    "IngestionReport",
    "SessionKind",
    "TurnOrigin",
    "TurnOutcome",
    "TurnStatus",
]

CommitHook = Callable[[str, tuple[str, ...]], Awaitable[None] | None]


class SessionKind(StrEnum):
    MAIN = "main"
    SUBAGENT = "subagent"  # its "user" turns are the parent's instructions: never extracted


class TurnStatus(StrEnum):
    COMPLETED = "completed"
    ABORTED = "aborted"
    ERROR = "error"  # a thrown turn: never extracted


class TurnOrigin(StrEnum):
    INITIAL = "initial"  # a normal send: extracted only when completed
    RESUME = "resume"
    RETRY = "retry"


@attrs.frozen(kw_only=True)
class TurnOutcome:
    """What the host reports once a turn has settled."""

    status: TurnStatus = attrs.field(converter=TurnStatus)
    origin: TurnOrigin = attrs.field(default=TurnOrigin.INITIAL, converter=TurnOrigin)
    had_tool_use: bool = False
    # After a compaction: extract up to here, whatever the thresholds say.
    compacted_through_order_seq: int | None = None


class IngestionOutcome(StrEnum):
    """How one pass ended. Every pass ends in exactly one of these (R-WRITE-6)."""

    COMPLETED = "completed"  # every chunk stored and the cursor advanced over them
    PARTIAL = "partial"  # the pass's chunk budget ran out; the chain continues the rest
    UNCOMMITTED = "uncommitted"  # stored from the tape fallback; cursor left alone (R-WRITE-8)
    NOTHING_NEW = "nothing-new"  # nothing extractable after the cursor
    BELOW_THRESHOLD = "below-threshold"  # admission thresholds not met yet
    NOT_ADMITTED = "not-admitted"  # turn status/origin, or the runtime is closed
    SUBAGENT = "subagent-session"  # never extracted (R-WRITE-2)
    STALE_FENCE = "stale-fence"  # configuration switch or destructive operation (ABA-safe)
    STALE_EPOCH = "stale-epoch"  # session invalidated, forked, cleared or destroyed
    CANCELLED = "cancelled"
    DEADLINE_EXCEEDED = "deadline-exceeded"
    FAILED = "failed"  # extraction, decision or store error


_POSITIVE = attrs.validators.gt(0)


@attrs.frozen(kw_only=True)
class IngestionPolicy:
    """Admission thresholds (reference §7.1) and the deadlines of one pass's calls."""

    min_messages: int = attrs.field(default=6, validator=_POSITIVE)
    min_messages_with_text: int = attrs.field(default=2, validator=_POSITIVE)
    min_visible_chars: int = attrs.field(default=160, validator=_POSITIVE)
    max_chunks_per_pass: int = attrs.field(default=4, validator=_POSITIVE)
    read_seconds: float = attrs.field(default=5.0, validator=_POSITIVE)
    extraction_seconds: float = attrs.field(default=60.0, validator=_POSITIVE)
    decision_seconds: float = attrs.field(default=60.0, validator=_POSITIVE)
    anchor_seconds: float = attrs.field(default=5.0, validator=_POSITIVE)
    projection_cooldown_seconds: float = attrs.field(default=30.0, validator=_POSITIVE)
    chunk_limits: ChunkLimits | None = None  # None: the settings' defaults


@attrs.frozen(kw_only=True)
class ChunkRecord:
    """One processed chunk: ids and counts only."""

    covered_through_order_seq: int
    cursor_commit_order_seq: int | None
    report: WriteReport
    cursor_advanced: bool
    anchor_id: str | None


@attrs.frozen(kw_only=True)
class IngestionReport:
    agent_id: str
    session_id: str
    outcome: IngestionOutcome
    cursor_before: int
    cursor_after: int
    commit_allowed: bool = False
    chunks: tuple[ChunkRecord, ...] = ()
    error: str | None = None  # the exception's type name; never its message

    @property
    def stored_ids(self) -> tuple[str, ...]:
        return tuple(i for chunk in self.chunks for i in chunk.report.stored_ids)
