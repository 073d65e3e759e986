"""MemoryRuntime: one session's memory — the turn contribution, its placement and its reuse.

Per turn (R-READ-1/5/7, R-HOST-1): retrieval for the injection purpose, the working
projection, the active directives, one allocator-driven assembly, access accounting for
exactly the ids that entered the prompt (once per (session, message)), and the manifest
persisted as a `memory/view_assembled` anchor. A refresh or context-pressure recovery of the
same message reuses that contribution: no second retrieval, accounting or anchor.

Fail-open: any failure inside returns an empty contribution with the failure recorded, so
the host's turn proceeds; the scheduler's hard timer backs the soft deadline against a port
that ignores it, and the anchor and access count, written after the contribution is decided,
may finish after the turn has returned but never cost it (R-READ-1). The runtime
never sees or rewrites the host's system prompt — it returns text the host prepends to the
user's own message.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.directives import DirectiveStatus
from memory_core.domain.errors import DeadlineExceeded, StoreError
from memory_core.domain.manifest import (
    Degradation,
    DroppedItem,
    DropReason,
    SelectionManifest,
)
from memory_core.domain.scope import ScopeContext
from memory_core.domain.validation import check_id, check_instance, check_int
from memory_core.ports.blocking import BlockingCalls
from memory_core.ports.claims import (
    ClaimReader,
    ClaimSearch,
    ClearStatus,
    DirectiveReader,
    Personas,
    WorkingProjections,
)
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import TaskScheduler
from memory_core.ports.tape import TapeAnchorWriter
from memory_core.services.read.bookkeeping import TurnBookkeeping
from memory_core.services.read.contribution import ContributionRequest, RecalledMemory, assemble
from memory_core.services.read.retrieval.failures import store_degradation
from memory_core.services.read.retrieval.service import (
    RetrievalDiagnostics,
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalService,
    fenced_by_clear,
)
from memory_core.services.read.working import WorkingMemory
from memory_core.services.write.ingestion.service import IngestionRuntime
from memory_core.services.write.ingestion.types import IngestionReport, SessionKind, TurnOutcome
from memory_core.settings import MemorySettings

__all__ = ["ContributionOutcome", "MemoryRuntime", "RuntimeStore", "TurnContribution", "place"]

log = logging.getLogger(__name__)

_JOIN = "\n\n"


class ContributionOutcome(StrEnum):
    ASSEMBLED = "assembled"
    EMPTY = "empty"  # nothing to contribute
    REUSED = "reused"  # a refresh of a turn already prepared
    FAILED_OPEN = "failedOpen"  # something failed; the turn proceeds without memory


@attrs.frozen(kw_only=True)
class TurnContribution:
    """What a host gets for one turn: texts to prepend, the manifest, the anchor id."""

    memory_text: str | None
    directive_text: str | None
    manifest: SelectionManifest
    anchor_id: str | None
    outcome: ContributionOutcome
    # Content-free timings and candidate counts of the turn's retrieval, for the host.
    retrieval: RetrievalDiagnostics | None = None

    @property
    def text(self) -> str | None:
        parts = [part for part in (self.memory_text, self.directive_text) if part]
        return _JOIN.join(parts) if parts else None

    @classmethod
    def empty(
        cls, outcome: ContributionOutcome, degradations: tuple[Degradation, ...] = ()
    ) -> TurnContribution:
        return cls(
            memory_text=None,
            directive_text=None,
            manifest=SelectionManifest(degradations=degradations),
            anchor_id=None,
            outcome=outcome,
        )


def _degradation(exc: Exception) -> Degradation:
    """The typed reason a turn failed open: a store timeout or error, else unknown (a host
    port's own exception, such as an OSError, is not ours to classify)."""
    if isinstance(exc, DeadlineExceeded | StoreError):
        return store_degradation(exc)
    return Degradation.UNKNOWN


def place(contribution: TurnContribution | None, user_text: str) -> str:
    """The user message with memory prepended; the user's own words stay last (R-READ-7)."""
    text = contribution.text if contribution is not None else None
    return f"{text}{_JOIN}{user_text}" if text else user_text


@runtime_checkable
class RuntimeStore(
    ClaimReader, ClaimSearch, ClearStatus, DirectiveReader, Personas, WorkingProjections, Protocol
):
    """The roles a turn reads through: active directives, whether a clear fences the agent,
    the stored working projection (and its source, when it must be rebuilt), the active
    persona, and the access counts of what entered the prompt."""


class MemoryRuntime:
    """Created per session by the MemoryService; cheap, holds only per-session state."""

    def __init__(
        self,
        *,
        agent_id: str,
        session_id: str,
        kind: SessionKind,
        store: RuntimeStore,
        retrieval: RetrievalService,
        anchors: TapeAnchorWriter | None,
        domain_clock: DomainClock,
        infra_clock: InfraClock,
        calls: BlockingCalls,
        settings: MemorySettings,
        scheduler: TaskScheduler | None = None,
        ingestion: IngestionRuntime | None = None,
        scope: ScopeContext | None = None,
        working: WorkingMemory | None = None,
    ) -> None:
        self.agent_id = agent_id
        self.session_id = session_id
        self.kind = SessionKind(kind)
        # What the turn may recall beyond Agent scope (R-SCOPE-1): this session, and the
        # user and project the host opened it for.
        self.scope = scope or ScopeContext(session_id=session_id)
        self._store = store
        self._retrieval = retrieval
        self._clock = domain_clock
        self._infra = infra_clock
        self._calls = calls  # the turn's store calls, off the loop for a networked store
        self._settings = settings
        self._turns: OrderedDict[str, TurnContribution] = OrderedDict()
        self._ingestion = ingestion
        self._scheduler = scheduler
        # The service shares one across its sessions (one debounce per agent); a runtime
        # built alone gets its own.
        self._working = working or WorkingMemory(
            store=store,
            calls=calls,
            domain_clock=domain_clock,
            infra_clock=infra_clock,
            settings=settings,
            scheduler=scheduler,
        )
        self._records = TurnBookkeeping(
            agent_id=agent_id,
            session_id=session_id,
            store=store,
            anchors=anchors,
            calls=calls,
            domain_clock=domain_clock,
            infra_clock=infra_clock,
            scheduler=scheduler,
            seconds=settings.turn_bookkeeping_seconds,
        )

    # --- write side: terminal ingestion (R-WRITE-1/2/3) --------------------------------------
    def after_turn_settled(self, turn: TurnOutcome) -> bool:
        """Report a settled turn. Extraction, if admitted, runs in the background: this
        returns at once (R-WRITE-1). False when nothing was scheduled (subagent session,
        thrown turn, thresholds not met, no extractor configured)."""
        if self._ingestion is None:
            return False
        return self._ingestion.after_turn_settled(turn) is not None

    async def fork(self, *, source_session_id: str, up_to_order_seq: int) -> int:
        """This session was forked from `source_session_id`: seed the cursor so only the
        unprocessed tail is extracted (R-WRITE-3). Returns the seeded cursor."""
        if self._ingestion is None:
            return 0
        return await self._ingestion.fork(
            source_session_id=source_session_id, up_to_order_seq=up_to_order_seq
        )

    def invalidate_from(self, order_seq: int) -> int:
        """Messages from `order_seq` on were edited, deleted or retried (R-WRITE-3)."""
        self._turns.clear()
        return self._ingestion.invalidate_from(order_seq) if self._ingestion else 0

    @property
    def last_ingestion(self) -> IngestionReport | None:
        return self._ingestion.last_report if self._ingestion else None

    async def drain(self) -> None:
        """Until background extraction, anchors and access counts of this session have
        settled (each is bounded by its own deadline)."""
        await self._records.drain()
        if self._ingestion is not None:
            await self._ingestion.drain()

    def close(self) -> None:
        """Refuse new turns and fence work in flight; `drain` waits for it to stop."""
        if self._ingestion is not None:
            self._ingestion.close()

    # --- read side ------------------------------------------------------------------------
    def contribution_for(self, message_id: str) -> TurnContribution | None:
        """The contribution already prepared for `message_id`, if any (refresh/recovery)."""
        return self._turns.get(message_id)

    async def prepare_turn(
        self,
        message_id: str,
        user_text: str,
        *,
        deadline: Deadline | None = None,
        cancel: CancellationToken | None = None,
        budget_tokens: int | None = None,
    ) -> TurnContribution:
        """The contribution for the user message `message_id`, prepared at most once.

        A second call for the same message (tool/skill refresh, context-pressure recovery,
        retry) returns the first result unchanged: no retrieval, no accounting, no anchor.

        A malformed argument is the host's bug, not the turn's weather: it is refused with a
        ValidationError naming the field (R-DOM-4) before the fail-open region. The message
        text itself is never refused — blanks, NULs and lone surrogates are handled.
        """
        message_id = check_id(message_id, "message_id")
        check_instance(user_text, str, "user_text")
        if budget_tokens is not None:
            check_int(budget_tokens, "budget_tokens", minimum=1)
        cached = self._turns.get(message_id)
        if cached is not None:
            return attrs.evolve(cached, outcome=ContributionOutcome.REUSED)
        soft = Deadline.after(self._infra, self._settings.prepare_turn_deadline_ms / 1000)
        deadline = soft.earliest(deadline)
        cancel = CancellationToken.linked_to(cancel)

        async def work() -> TurnContribution:
            return await self._assemble(user_text, budget_tokens, deadline, cancel)

        try:
            if self._scheduler is None:
                turn = await work()
            else:
                # Every await below honours the deadline; the timer is the backstop for a
                # port that does not (R-READ-1: the turn never waits past it).
                turn = await self._scheduler.run_within(work, deadline.remaining())
        except Exception as exc:  # fail open on anything (R-READ-1)
            cancel.cancel("turn deadline")
            # The reply matters more than the memory block; the type alone is logged, a
            # message may quote content.
            log.warning(
                "prepare_turn failed open for agent %s: %s", self.agent_id, type(exc).__name__
            )
            return TurnContribution.empty(ContributionOutcome.FAILED_OPEN, (_degradation(exc),))
        if turn.outcome is ContributionOutcome.FAILED_OPEN:  # a retry tries again
            return turn
        self._remember(message_id, turn)
        anchor_id = await self._records.record(
            message_id,
            turn.manifest,
            deadline=deadline,
            written=lambda anchor_id: self._anchored(message_id, anchor_id),
        )
        return attrs.evolve(turn, anchor_id=anchor_id)

    async def _assemble(
        self,
        user_text: str,
        budget_tokens: int | None,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> TurnContribution:
        started = self._infra.monotonic()
        now = self._clock.now()
        agent_id = self.agent_id
        try:
            # One blocking hop for what every turn reads (R-READ-1): the directives and
            # whether a clear fences the agent (retrieval reuses both), the stored working
            # projection and the active persona.
            directives, fenced, stored, persona = await self._calls.run(
                lambda: (
                    tuple(self._store.list_directives(agent_id, status=DirectiveStatus.ACTIVE)),
                    fenced_by_clear(self._store, agent_id),
                    self._store.working_projection(agent_id),
                    self._store.persona(agent_id),
                ),
                deadline=deadline,
                cancel=cancel,
            )
        except (DeadlineExceeded, StoreError) as exc:
            return self._failed_open(exc)
        result = await self._retrieval.retrieve(
            RetrievalRequest(
                agent_id=agent_id,
                query=user_text,
                purpose=RetrievalPurpose.INJECTION,
                context=self.scope,
                reserve=self._settings.top_k,
                directives=directives,
                fenced=fenced,
            ),
            deadline=deadline,
            cancel=cancel,
        )
        try:
            working = self._working.current(stored, directives, now=now)
            if working is None:
                # Missing, stale, another recipe or past a temporal boundary: this turn
                # rebuilds it from the claims (never shows a stale one), and the row is
                # stored in the background, compare-and-set on the generation read above.
                newest = await self._calls.run(
                    lambda: self._working.source(agent_id), deadline=deadline, cancel=cancel
                )
                working = self._working.build(newest, directives, now=now)
                self._working.keep(agent_id, working, generation=stored.generation)
        except (DeadlineExceeded, StoreError) as exc:
            return self._failed_open(exc, result.degradations)
        # A suppressed topic stays out of the whole contribution, working memory included,
        # not only out of recall (R-DIR-2): the projection was built without its claims.
        already = {item.id for item in result.dropped}
        hidden = tuple(
            DroppedItem(id=claim.id, kind=claim.kind, reason=DropReason.SUPPRESSED)
            for claim in working.hidden
            if claim.id not in already
        )
        in_working = {entry.id for entry in working.entries}
        # A fact already shown in working memory is not paid for twice, and its place in the
        # recall lane goes to the next-ranked memory rather than staying empty.
        recalled = [
            item for item in (*result.items, *result.reserve) if item.claim.id not in in_working
        ][: len(result.items)]
        repeated = tuple(
            DroppedItem(id=item.claim.id, kind=item.claim.kind, reason=DropReason.DUPLICATE)
            for item in result.items
            if item.claim.id in in_working
        )
        assembly_started = self._infra.monotonic()
        contribution = assemble(
            ContributionRequest(
                total_budget=budget_tokens or self._settings.contribution_budget_tokens,
                recalled=tuple(RecalledMemory.from_scored(item) for item in recalled),
                # Only the approved version: a draft is never shown (reference §8.6).
                persona=persona.active.content if persona.active is not None else None,
                working=working.text,
                directives=tuple(directives),
                query_hash=result.query_hash,
                degradations=tuple(
                    d for d in result.degradations if d is not Degradation.VECTOR_COLD
                ),
                prior_drops=(*result.dropped, *repeated, *hidden),
            ),
            settings=self._settings,
        )
        retrieval_timings = result.diagnostics.timings
        manifest = attrs.evolve(
            contribution.manifest,
            timings=attrs.evolve(
                retrieval_timings,
                assembly=retrieval_timings.assembly
                + 1000.0 * (self._infra.monotonic() - assembly_started),
                total=1000.0 * (self._infra.monotonic() - started),
            ),
        )
        outcome = ContributionOutcome.ASSEMBLED if contribution.text else ContributionOutcome.EMPTY
        return TurnContribution(
            memory_text=contribution.memory_text,
            directive_text=contribution.directive_text,
            manifest=manifest,
            anchor_id=None,  # set by `_book` once the anchor is written
            outcome=outcome,
            retrieval=result.diagnostics,
        )

    def _failed_open(
        self, exc: DeadlineExceeded | StoreError, prior: tuple[Degradation, ...] = ()
    ) -> TurnContribution:
        # Without the directives nothing can be shown safely: fail open, and say why
        # (R-READ-1).
        log.warning("turn store read failed for agent %s: %s", self.agent_id, type(exc).__name__)
        degradations = (*prior, store_degradation(exc))
        return TurnContribution.empty(
            ContributionOutcome.FAILED_OPEN, tuple(dict.fromkeys(degradations))
        )

    def _anchored(self, message_id: str, anchor_id: str) -> None:
        # A late anchor still reaches the cached turn, so a refresh sees its id.
        cached = self._turns.get(message_id)
        if cached is not None:
            self._turns[message_id] = attrs.evolve(cached, anchor_id=anchor_id)

    def _remember(self, message_id: str, turn: TurnContribution) -> None:
        self._turns[message_id] = turn
        while len(self._turns) > self._settings.turn_cache_turns:
            self._turns.popitem(last=False)
