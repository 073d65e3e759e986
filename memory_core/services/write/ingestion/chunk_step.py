"""One chunk of an ingestion pass, start to end: extract (off the loop when the extractor
only computes) → decide → under the agent's write lock re-check the fence and store → let the
commit hook mark the new claims for embedding → advance the cursor (monotone, only while the
session epoch holds) → append a content-free `memory/extract` anchor. Refusals by the model
are bounded here (R-WRITE-6): a refused chunk is halved until the refused message stands
alone, and a lone one is given up once refused `max_chunk_attempts` times.
"""

from __future__ import annotations

import inspect
import logging

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    DeadlineExceeded,
    FencedError,
    OperationCancelled,
    ProviderResponseError,
)
from memory_core.ports.tape import Anchor, AnchorKind
from memory_core.services.write.chunking import Chunk, split_chunk
from memory_core.services.write.decision.service import WriteContext, WriteReport
from memory_core.services.write.fences import WriteCoordinator, WriteTicket
from memory_core.services.write.ingestion.extraction import chunk_request, extract
from memory_core.services.write.ingestion.services import IngestionServices
from memory_core.services.write.ingestion.types import ChunkRecord, IngestionOutcome

__all__ = ["ChunkStep", "failure_outcome"]

_log = logging.getLogger(__name__)


def failure_outcome(
    coordinator: WriteCoordinator, exc: Exception, ticket: WriteTicket
) -> IngestionOutcome:
    """How a pass that raised `exc` ended. Staleness first: an epoch bump also cancels the
    token, so the error it causes is a symptom of the invalidation, not the reason."""
    if not coordinator.epochs.is_current(ticket.session_id, ticket.epoch):
        return IngestionOutcome.STALE_EPOCH
    if not coordinator.fences.is_current(ticket.identity) or isinstance(exc, FencedError):
        return IngestionOutcome.STALE_FENCE
    if isinstance(exc, OperationCancelled):
        return IngestionOutcome.CANCELLED
    if isinstance(exc, DeadlineExceeded):
        return IngestionOutcome.DEADLINE_EXCEEDED
    return IngestionOutcome.FAILED


class ChunkStep:
    """Processes the chunks of one session's passes (the runtime owns the chain around it)."""

    def __init__(self, services: IngestionServices, *, agent_id: str, session_id: str) -> None:
        self._s = services
        self.agent_id = agent_id
        self.session_id = session_id
        self.unannounced = False  # a chunk took the write lock since the last announce

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
        # Announced once the chain ends (`IngestionRuntime`): the working projection is
        # rebuilt when the writes pause, not after every chunk of a long tape.
        self.unannounced = True
        async with s.coordinator.exclusive(self.agent_id, announce=False):
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

    async def process_isolating(
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
            if (
                not commit_allowed
                or failure_outcome(self._s.coordinator, exc, ticket) is not IngestionOutcome.FAILED
            ):
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
                await self.process_isolating(half, ticket, commit_allowed, reason, cancel)
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

    def _deadline(self, seconds: float) -> Deadline:
        return Deadline.after(self._s.infra_clock, seconds)
