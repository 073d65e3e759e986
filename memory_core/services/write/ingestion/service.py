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

This module is the chain and its passes; the range and thresholds are `range`, one chunk's
work `chunk_step`, the shared ports `services`, the vocabulary `types`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.scheduler import TaskHandle
from memory_core.services.write.chunking import chunk_messages
from memory_core.services.write.fences import WriteTicket
from memory_core.services.write.fork_cursor import map_fork_cursor, rewind_cursor
from memory_core.services.write.ingestion.chunk_step import ChunkStep, failure_outcome
from memory_core.services.write.ingestion.range import RangeReader
from memory_core.services.write.ingestion.services import IngestionServices
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
        self._range = RangeReader(services, session_id=session_id)
        self._step = ChunkStep(services, agent_id=agent_id, session_id=session_id)
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
        try:
            while self._queued is not None and not self._closed:
                admission, self._queued = self._queued, None
                report = await self._pass(admission)
                self._publish(report)
                if report.outcome in (IngestionOutcome.PARTIAL, IngestionOutcome.SKIPPED):
                    # The rest of an admitted range needs no second admission.
                    self._queued = attrs.evolve(self._queued or admission, forced=True)
        finally:
            # The writes pause: the chunks' commits are announced once (the working
            # projection's rebuild), whatever ended the chain.
            if self._step.unannounced:
                self._step.unannounced = False
                self._s.coordinator.announce(self.agent_id)

    async def _pass(self, admission: _Admission) -> IngestionReport:
        cancel, ticket = self._cancel, admission.ticket
        position = self._s.cursors.position(self.agent_id, self.session_id)
        cursor = position.order_seq
        records: list[ChunkRecord] = []
        commit_allowed = False
        try:
            self._s.coordinator.check(ticket)
            entries, commit_allowed = await self._range.read(cursor, cancel)
            self._s.coordinator.check(ticket)
            limit = admission.turn.compacted_through_order_seq
            if limit is not None:
                entries = [entry for entry in entries if entry.order_seq <= limit]
            elif not admission.forced and not self._range.meets_thresholds(entries, admission.turn):
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
                    await self._step.process_isolating(
                        chunk, ticket, commit_allowed, reason, cancel
                    )
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
            outcome = failure_outcome(self._s.coordinator, exc, ticket)
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
