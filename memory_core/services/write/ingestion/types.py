"""The vocabulary of terminal ingestion: turn outcomes, pass outcomes, policy and reports.

Values only; the runtime that uses them is `memory_core.services.write.ingestion.service`
(and its `range` and `chunk_step`).
Reports carry ids, counts, order_seqs and exception type names — never content.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum

import attrs

from memory_core.services.write.chunking import ChunkLimits
from memory_core.services.write.decision.service import WriteReport
from memory_core.settings import MemorySettings

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
    SKIPPED = "skipped"  # a chunk refused on every attempt: given up, the cursor passed it


@attrs.frozen(kw_only=True)
class IngestionPolicy:
    """Admission thresholds (reference §7.1), chunk limits and the deadlines of one pass's
    calls. No defaults of its own: built from `MemorySettings`, which validates them."""

    min_messages: int
    min_messages_with_text: int
    min_visible_chars: int
    max_chunks_per_pass: int
    max_chunk_attempts: int
    read_seconds: float
    extraction_seconds: float
    decision_seconds: float
    anchor_seconds: float
    projection_cooldown_seconds: float
    chunk_limits: ChunkLimits

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> IngestionPolicy:
        return cls(
            min_messages=settings.ingestion_min_messages,
            min_messages_with_text=settings.ingestion_min_messages_with_text,
            min_visible_chars=settings.ingestion_min_visible_chars,
            max_chunks_per_pass=settings.ingestion_max_chunks_per_pass,
            max_chunk_attempts=settings.ingestion_max_chunk_attempts,
            read_seconds=settings.tape_read_seconds,
            extraction_seconds=settings.extraction_seconds,
            decision_seconds=settings.decision_seconds,
            anchor_seconds=settings.anchor_seconds,
            projection_cooldown_seconds=settings.projection_cooldown_seconds,
            chunk_limits=ChunkLimits.from_settings(settings),
        )


@attrs.frozen(kw_only=True)
class ChunkRecord:
    """One processed chunk: ids and counts only."""

    covered_through_order_seq: int
    cursor_commit_order_seq: int | None
    report: WriteReport
    cursor_advanced: bool
    anchor_id: str | None
    error: str | None = None  # a refused chunk given up: the exception's type name


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
