"""The ingestion runtime of one session: terminal turns to stored claims (SPEC §7, R-HOST-1).

`after_turn_settled` decides admission synchronously and hands the work to the scheduler, so
the reply is never delayed (R-WRITE-1). The background pass, per reference §7.1:
range (projection when current; else the effective tape, committing only if the projection
rebuild succeeded; projection failure: tape fallback, never commit — R-WRITE-8) → admission
thresholds → chunks → per chunk: extract (domain-clock frame, dated when said) → decide →
under the agent's write lock re-check the fence and store → let the commit hook settle →
advance the cursor (monotone) → append a content-free `memory/extract` anchor. The chain
stops on a failure, a fence change or an epoch change, and every pass ends in one explicit
`IngestionOutcome` (R-WRITE-6). Subagent sessions are never extracted (R-WRITE-2). Fork and
invalidation move the cursor and bump the session epoch (R-WRITE-3).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    DeadlineExceeded,
    FencedError,
    OperationCancelled,
    ProviderResponseError,
)
from memory_core.ports.blocking import BlockingCalls
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.cursor import CursorStore
from memory_core.ports.extraction import Extractor
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.ports.tape import (
    Anchor,
    AnchorKind,
    IngestionProjection,
    TapeAnchorWriter,
    TapeEntry,
    TapeRawEntryReader,
)
from memory_core.services.write.chunking import (
    Chunk,
    chunk_messages,
    is_extractable,
    split_chunk,
)
from memory_core.services.write.decision.service import DecisionService, WriteContext, WriteReport
from memory_core.services.write.fences import WriteCoordinator, WriteTicket
from memory_core.services.write.fork_cursor import map_fork_cursor, rewind_cursor
from memory_core.services.write.ingestion.extraction import chunk_request, extract
from memory_core.services.write.ingestion.types import (
    ChunkRecord,
    CommitHook,
    IngestionOutcome,
    IngestionPolicy,
    IngestionReport,
    SessionKind,
    TurnOrigin,
    TurnOutcome,
    TurnStatus,
)

__all__ = [
    "ChunkRecord",
    "CommitHook",
    "IngestionOutcome",
    "IngestionPolicy",
    "IngestionReport",
    "IngestionRuntime",
    "IngestionServices",
    "SessionKind",
    "TurnOrigin",
    "TurnOutcome",
    "TurnStatus",
]

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class IngestionServices:
    """The ports and services every session's runtime shares (one set per configuration)."""

    extractor: Extractor
    decisions: DecisionService
    tape: TapeRawEntryReader
    projection: IngestionProjection
    anchors: TapeAnchorWriter
    cursors: CursorStore
    coordinator: WriteCoordinator
    scheduler: TaskScheduler
    domain_clock: DomainClock
    infra_clock: InfraClock
    policy: IngestionPolicy  # IngestionPolicy.from_settings: no defaults of its own
    on_committed: CommitHook | None = None  # e.g. the embedding pipeline: marks, never waits
    # Awaited by `drain` once the chain has settled: until the work `on_committed` started
    # (the embeddings of the session's claims) has settled too.
    settle_committed: Callable[[str], Awaitable[None]] | None = None
    on_report: Callable[[IngestionReport], None] | None = None
    # Runs a `BlockingExtractor`'s computation off the event loop; None runs it on the loop.
    offload: BlockingCalls | None = None


@attrs.frozen(kw_only=True)
class _Admission:
    turn: TurnOutcome
    ticket: WriteTicket
    forced: bool = False  # a continuation of an admitted pass: thresholds already met


class IngestionRuntime:
    """Terminal ingestion, cursor, epoch and fence of one session (R-HOST-1)."""

    def __init__(
        self,
        services: IngestionServices,
        *,
        agent_id: str,
        session_id: str,
        session_kind: SessionKind = SessionKind.MAIN,
    ) -> None:
        self._s = services
        self.agent_id = agent_id
        self.session_id = session_id
        self.session_kind = SessionKind(session_kind)
        self._chain: TaskHandle | None = None
        self._queued: _Admission | None = None
        self._cancel = CancellationToken()
        self._closed = False
        self._projection_down_until: float | None = None
        self.last_report: IngestionReport | None = None

    # --- host surface ---------------------------------------------------------------------
    def after_turn_settled(self, turn: TurnOutcome) -> TaskHandle | None:
        """Admit a settled turn and schedule its extraction; returns at once, with the
        chain's handle, or None when the turn is not extracted (a report says why)."""
        refusal = self._refusal(turn)
        if refusal is not None:
            cursor = self._s.cursors.get(self.agent_id, self.session_id)
            self._publish(self._report(refusal, cursor, cursor))
            return None
        self._queued = _Admission(
            turn=turn, ticket=self._s.coordinator.ticket(self.agent_id, self.session_id)
        )
        if self._chain is None or self._chain.done:
            self._chain = self._s.scheduler.spawn(
                self._run_chain, name=f"memory-ingest:{self.session_id}"
            )
        return self._chain

    async def fork(
        self,
        *,
        source_session_id: str,
        up_to_order_seq: int,
        deadline: Deadline | None = None,
        cancel: CancellationToken | None = None,
    ) -> int:
        """Seed this (clone) session's cursor from its fork source: the clone position of
        the source's extracted prefix, so later turns extract only the unprocessed tail
        (R-WRITE-3). Fences older work of this session. Returns the seeded cursor."""
        source = await self._s.tape.get_by_session(
            source_session_id,
            deadline=deadline or self._deadline(self._s.policy.read_seconds),
            cancel=cancel or CancellationToken(),
        )
        seeded = map_fork_cursor(
            source, self._s.cursors.get(self.agent_id, source_session_id), up_to_order_seq
        )
        self._new_epoch("fork")
        self._s.cursors.rewind(self.agent_id, self.session_id, seeded)
        return self._s.cursors.advance(self.agent_id, self.session_id, seeded)

    def invalidate_from(self, order_seq: int) -> int:
        """Messages from `order_seq` on were edited, deleted or retried: rewind the cursor
        before them and fence work in flight (R-WRITE-3). Returns the cursor."""
        rewound = rewind_cursor(self._s.cursors.get(self.agent_id, self.session_id), order_seq)
        self._new_epoch("invalidated")
        return self._s.cursors.rewind(self.agent_id, self.session_id, rewound)

    def clear_transcript(self) -> None:
        self._new_epoch("transcript cleared")
        self._s.cursors.rewind(self.agent_id, self.session_id, 0)

    def close(self) -> TaskHandle | None:
        """Session destroyed or agent reassigned: refuse new turns, fence and cancel work in
        flight. Returns the chain to drain, if one is running."""
        self._closed = True
        self._new_epoch("closed")
        return self._chain if self._chain is not None and not self._chain.done else None

    async def drain(self) -> None:
        """Until the current chain (if any) has settled, and the embeddings it started."""
        if self._chain is not None:
            await self._chain.wait()
        if self._s.settle_committed is not None:
            await self._s.settle_committed(self.agent_id)

    # --- the chain ------------------------------------------------------------------------
    def _refusal(self, turn: TurnOutcome) -> IngestionOutcome | None:
        if self.session_kind is SessionKind.SUBAGENT:
            return IngestionOutcome.SUBAGENT
        if self._closed or turn.status is TurnStatus.ERROR:
            return IngestionOutcome.NOT_ADMITTED
        if turn.origin is TurnOrigin.INITIAL and turn.status is not TurnStatus.COMPLETED:
            return IngestionOutcome.NOT_ADMITTED
        return None

    def _new_epoch(self, reason: str) -> None:
        self._s.coordinator.epochs.bump(self.session_id)
        self._cancel.cancel(reason)
        self._cancel = CancellationToken()

    async def _run_chain(self) -> None:
        # One chain per session: turns settling meanwhile are picked up by the loop, so the
        # session's passes never overlap and the cursor moves in order.
        while self._queued is not None and not self._closed:
            admission, self._queued = self._queued, None
            report = await self._pass(admission)
            self._publish(report)
            if report.outcome in (IngestionOutcome.PARTIAL, IngestionOutcome.SKIPPED):
                # The rest of an admitted range needs no second admission.
                self._queued = attrs.evolve(self._queued or admission, forced=True)

    async def _pass(self, admission: _Admission) -> IngestionReport:
        cancel, ticket = self._cancel, admission.ticket
        position = self._s.cursors.position(self.agent_id, self.session_id)
        cursor = position.order_seq
        records: list[ChunkRecord] = []
        commit_allowed = False
        try:
            self._s.coordinator.check(ticket)
            entries, commit_allowed = await self._read_range(cursor, cancel)
            self._s.coordinator.check(ticket)
            limit = admission.turn.compacted_through_order_seq
            if limit is not None:
                entries = [entry for entry in entries if entry.order_seq <= limit]
            elif not admission.forced and not self._meets_thresholds(entries, admission.turn):
                return self._report(IngestionOutcome.BELOW_THRESHOLD, cursor, cursor)
            # Without commits the cursor cannot carry the chain forward: do it all at once.
            # With them, only the budget (and one more, to know there is more) is chunked, so
            # a pass costs the same whatever the length of the message (R-WRITE-1).
            budget = self._s.policy.max_chunks_per_pass if commit_allowed else None
            chunks = [
                chunk
                for chunk in chunk_messages(
                    entries, self._s.policy.chunk_limits, start=position, max_chunks=budget
                )
                if chunk.covered_through_order_seq > cursor
            ]
            if not chunks:
                return self._report(IngestionOutcome.NOTHING_NEW, cursor, cursor)
            budget = len(chunks) if budget is None else budget
            reason = "fallback" if limit is None else "compaction"
            for chunk in chunks[:budget]:
                records.extend(
                    await self._process_isolating(chunk, ticket, commit_allowed, reason, cancel)
                )
            skipped = next((r.error for r in records if r.error is not None), None)
            if skipped is not None:
                return self._report(
                    IngestionOutcome.SKIPPED, cursor, None, True, records, error=skipped
                )
            if not commit_allowed:
                outcome = IngestionOutcome.UNCOMMITTED
            elif len(chunks) > budget:
                outcome = IngestionOutcome.PARTIAL
            else:
                outcome = IngestionOutcome.COMPLETED
            return self._report(outcome, cursor, None, commit_allowed, records)
        except Exception as exc:
            outcome = self._classify(exc, ticket)
            if outcome is IngestionOutcome.FAILED:
                _log.warning(
                    "ingestion of session %s failed: %s", self.session_id, type(exc).__name__
                )
            return self._report(
                outcome, cursor, None, commit_allowed, records, error=type(exc).__name__
            )
        except BaseException:
            # The scheduler cancelled the task: still settle with an explicit outcome.
            self._publish(self._report(IngestionOutcome.CANCELLED, cursor, None, False, records))
            raise

    def _classify(self, exc: Exception, ticket: WriteTicket) -> IngestionOutcome:
        # Staleness first: an epoch bump also cancels the token, so the error it causes is
        # a symptom of the invalidation, not the reason.
        epochs, fences = self._s.coordinator.epochs, self._s.coordinator.fences
        if not epochs.is_current(ticket.session_id, ticket.epoch):
            return IngestionOutcome.STALE_EPOCH
        if not fences.is_current(ticket.identity) or isinstance(exc, FencedError):
            return IngestionOutcome.STALE_FENCE
        if isinstance(exc, OperationCancelled):
            return IngestionOutcome.CANCELLED
        if isinstance(exc, DeadlineExceeded):
            return IngestionOutcome.DEADLINE_EXCEEDED
        return IngestionOutcome.FAILED

    def _meets_thresholds(self, entries: Sequence[TapeEntry], turn: TurnOutcome) -> bool:
        if turn.had_tool_use:
            return True
        messages = [entry for entry in entries if is_extractable(entry)]
        policy = self._s.policy
        if len(messages) >= policy.min_messages:
            return True
        visible = sum(len(entry.content.strip()) for entry in messages)
        return (
            len(messages) >= policy.min_messages_with_text and visible >= policy.min_visible_chars
        )

    async def _read_range(
        self, cursor: int, cancel: CancellationToken
    ) -> tuple[list[TapeEntry], bool]:
        """The entries after `cursor`, and whether a commit may advance the cursor."""
        projection_up = (
            self._projection_down_until is None
            or self._s.infra_clock.monotonic() >= self._projection_down_until
        )
        commit_allowed = False
        if projection_up:
            try:
                current = await self._s.projection.read_current_range(
                    self.session_id,
                    cursor,
                    deadline=self._deadline(self._s.policy.read_seconds),
                    cancel=cancel,
                )
                if current.current:
                    return list(current.entries), True
                await self._s.projection.rebuild_projection(
                    self.session_id,
                    deadline=self._deadline(self._s.policy.read_seconds),
                    cancel=cancel,
                )
                commit_allowed = True
            except OperationCancelled:
                raise
            except Exception as exc:
                # Fall back to the tape, without cursor commits, and spare the projection
                # for a while instead of failing on it every turn.
                _log.warning(
                    "ingestion projection of session %s unavailable: %s",
                    self.session_id,
                    type(exc).__name__,
                )
                self._projection_down_until = (
                    self._s.infra_clock.monotonic() + self._s.policy.projection_cooldown_seconds
                )
        effective = await self._s.tape.get_by_session(
            self.session_id, deadline=self._deadline(self._s.policy.read_seconds), cancel=cancel
        )
        return [entry for entry in effective if entry.order_seq > cursor], commit_allowed

    async def _process(
        self,
        chunk: Chunk,
        ticket: WriteTicket,
        commit_allowed: bool,
        reason: str,
        cancel: CancellationToken,
    ) -> ChunkRecord:
        s = self._s
        request, said_at = chunk_request(
            chunk, agent_id=self.agent_id, session_id=self.session_id, clock=s.domain_clock
        )
        result = await extract(
            s.extractor,
            request,
            offload=s.offload,
            deadline=self._deadline(s.policy.extraction_seconds),
            cancel=cancel,
        )
        s.coordinator.check(ticket)
        plan = await s.decisions.plan(
            WriteContext(
                agent_id=self.agent_id,
                now=s.domain_clock.now(),
                said_at=said_at,
                session_id=self.session_id,
                extractor=s.extractor.name,
                entry_order={part.entry_id: part.order_seq for part in chunk.parts},
            ),
            result,
            deadline=self._deadline(s.policy.decision_seconds),
            cancel=cancel,
        )
        async with s.coordinator.exclusive(self.agent_id):
            s.coordinator.check(ticket)  # no await between this check and the writes
            report = s.decisions.apply(plan)
        # Revived rows lost their embedding with their revision: embed them now too.
        await self._notify_committed((*report.stored_ids, *report.revived_ids))
        advanced = False
        if commit_allowed:
            # The claims are in; only the session epoch decides whether the cursor may
            # pass them (an invalidation meanwhile must re-extract this range).
            s.coordinator.epochs.check(ticket.session_id, ticket.epoch)
            advanced = self._advance_past(chunk)
        anchor_id = await self._append_anchor(chunk, report, advanced, reason, cancel)
        return ChunkRecord(
            covered_through_order_seq=chunk.covered_through_order_seq,
            cursor_commit_order_seq=chunk.cursor_commit_order_seq,
            report=report,
            cursor_advanced=advanced,
            anchor_id=anchor_id,
        )

    async def _process_isolating(
        self,
        chunk: Chunk,
        ticket: WriteTicket,
        commit_allowed: bool,
        reason: str,
        cancel: CancellationToken,
    ) -> list[ChunkRecord]:
        """`_process`, bounding refusals (R-WRITE-6). The model refused `chunk` (an unusable
        answer, or a 4xx): each refused call counts at the cursor position. A first refusal
        fails the pass (it may be a one-off; a later turn retries). A repeated one halves a
        chunk of several messages until the refused message stands alone, so the messages
        packed with it are still extracted; a lone refused message is given up once the count
        reaches `max_chunk_attempts`: the cursor passes it and its `memory/extract` anchor says
        so. An outage (ProviderUnavailable) is no refusal and never counts; neither does the
        tape fallback, whose cursor cannot move anyway."""
        try:
            return [await self._process(chunk, ticket, commit_allowed, reason, cancel)]
        except ProviderResponseError as exc:
            if not commit_allowed or self._classify(exc, ticket) is not IngestionOutcome.FAILED:
                raise
            attempts = self._s.cursors.record_failure(self.agent_id, self.session_id)
            halves = split_chunk(chunk) if attempts > 1 else None
            if halves is None:
                if attempts < self._s.policy.max_chunk_attempts:
                    raise
                return [await self._skip(chunk, type(exc).__name__, attempts, ticket, cancel)]
        records: list[ChunkRecord] = []
        for half in halves:
            records.extend(
                await self._process_isolating(half, ticket, commit_allowed, reason, cancel)
            )
        return records

    def _advance_past(self, chunk: Chunk) -> bool:
        """Move the cursor over `chunk`: into its message when it ends mid-message, else past
        the last message it completed. False when it completes nothing and ends on no offset."""
        if chunk.resume is not None:
            resume = chunk.resume
            self._s.cursors.advance(
                self.agent_id,
                self.session_id,
                resume.order_seq,
                fragment_offset=resume.fragment_offset,
            )
            return True
        if chunk.cursor_commit_order_seq is None:
            return False
        self._s.cursors.advance(self.agent_id, self.session_id, chunk.cursor_commit_order_seq)
        return True

    async def _skip(
        self,
        chunk: Chunk,
        error: str,
        attempts: int,
        ticket: WriteTicket,
        cancel: CancellationToken,
    ) -> ChunkRecord:
        """Give `chunk` up for good: the cursor passes it, its anchor records the outcome."""
        s = self._s
        s.coordinator.epochs.check(ticket.session_id, ticket.epoch)
        advanced = self._advance_past(chunk)
        _log.warning(
            "ingestion of session %s: chunk through order_seq %d refused %d times (%s), skipped",
            self.session_id,
            chunk.covered_through_order_seq,
            attempts,
            error,
        )
        report = WriteReport()
        anchor_id = await self._append_anchor(
            chunk,
            report,
            advanced,
            "refused",
            cancel,
            skipped={"error": error, "attempts": attempts},
        )
        return ChunkRecord(
            covered_through_order_seq=chunk.covered_through_order_seq,
            cursor_commit_order_seq=chunk.cursor_commit_order_seq,
            report=report,
            cursor_advanced=advanced,
            anchor_id=anchor_id,
            error=error,
        )

    async def _notify_committed(self, ids: tuple[str, ...]) -> None:
        hook = self._s.on_committed
        if hook is None or not ids:
            return
        try:
            result = hook(self.agent_id, ids)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            # The claims are committed either way; their embeddings stay pending and the
            # pipeline's next drain picks them up.
            _log.warning("commit hook failed for agent %s: %s", self.agent_id, type(exc).__name__)

    async def _append_anchor(
        self,
        chunk: Chunk,
        report: WriteReport,
        advanced: bool,
        reason: str,
        cancel: CancellationToken,
        *,
        skipped: dict[str, object] | None = None,
    ) -> str | None:
        payload: dict[str, object] = {
            **report.payload(),
            "reason": reason,
            "sourceEntryIds": list(chunk.source_entry_ids),
            "coveredThroughOrderSeq": chunk.covered_through_order_seq,
            "cursorCommitOrderSeq": chunk.cursor_commit_order_seq,
            "cursorAdvanced": advanced,
            "fragments": chunk.fragment_count,
            "fragmentOffset": None if chunk.resume is None else chunk.resume.fragment_offset,
        }
        if skipped is not None:
            # The terminal outcome of a refused chunk: a type name and a count, no content.
            payload["skipped"] = skipped
        try:
            return await self._s.anchors.append(
                Anchor(
                    kind=AnchorKind.EXTRACT,
                    agent_id=self.agent_id,
                    session_id=self.session_id,
                    message_id=chunk.parts[-1].entry_id,
                    payload=payload,
                ),
                deadline=self._deadline(self._s.policy.anchor_seconds),
                cancel=cancel,
            )
        except OperationCancelled:
            raise
        except Exception as exc:
            # The anchor records the work; losing it must not undo or repeat the work.
            _log.warning("memory/extract anchor not written: %s", type(exc).__name__)
            return None

    # --- helpers --------------------------------------------------------------------------
    def _deadline(self, seconds: float) -> Deadline:
        return Deadline.after(self._s.infra_clock, seconds)

    def _report(
        self,
        outcome: IngestionOutcome,
        before: int,
        after: int | None,
        commit_allowed: bool = False,
        chunks: Sequence[ChunkRecord] = (),
        *,
        error: str | None = None,
    ) -> IngestionReport:
        return IngestionReport(
            agent_id=self.agent_id,
            session_id=self.session_id,
            outcome=outcome,
            cursor_before=before,
            cursor_after=(
                self._s.cursors.get(self.agent_id, self.session_id) if after is None else after
            ),
            commit_allowed=commit_allowed,
            chunks=tuple(chunks),
            error=error,
        )

    def _publish(self, report: IngestionReport) -> None:
        self.last_report = report
        _log.info(
            "ingestion %s: session %s, %d chunk(s), %d stored, cursor %d -> %d",
            report.outcome.value,
            report.session_id,
            len(report.chunks),
            len(report.stored_ids),
            report.cursor_before,
            report.cursor_after,
        )
        if self._s.on_report is not None:
            try:
                self._s.on_report(report)
            except Exception as exc:
                _log.warning("ingestion report hook failed: %s", type(exc).__name__)
