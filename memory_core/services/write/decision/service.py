"""The write decision step: from an extractor's candidates to stored claims (reference §7.4).

Two halves, so that the slow part never holds the agent's write lock:
- `DecisionService.plan` (async, no lock): normalise candidates, reject over-long ones, merge
  duplicates of one batch with temporal reconciliation (§7.6, `candidates`), and — in llm
  mode — ask the text provider for ADD/UPDATE/SUPERSEDE/NOOP/CHALLENGE against same-scope
  neighbours; a fault of the neighbour search or of the model costs the merge, never the
  facts (those candidates fall back to ADD and are counted);
- `DecisionService.apply` (sync, under the lock): carry the plan out against the store
  (`storing`): provenance dedup and tombstones in the store's insert transaction
  (R-WRITE-4), slots superseded with lineage (R-LINEAGE-1), never across scopes
  (R-SCOPE-3), directive suggestions as drafts only (R-DIR-1).

The result is a `WriteReport` of ids and counts, never content.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim, ClaimDraft
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled, ProviderError
from memory_core.domain.provenance import canonical_content
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import TemporalMetadata
from memory_core.domain.temporal_policy import TemporalMode, assess
from memory_core.ports.extraction import ExtractionResult
from memory_core.services.providers.gateway.service import ProviderGateway, TextPurpose
from memory_core.services.write.decision.candidates import (
    WriteContext,
    prepare_candidates,
    reconcile_merged,
)
from memory_core.services.write.decision.plan import DecisionPlan, PlannedWrite
from memory_core.services.write.decision.prompt import (
    Decision,
    DecisionAction,
    DecisionItem,
    KnownMemory,
    build_decision_request,
    fit_items,
    parse_decisions,
)
from memory_core.services.write.decision.report import WriteReport
from memory_core.services.write.decision.storing import DecisionStore, PlanWriter
from memory_core.settings import MemorySettings

# The decision step's public names, importable from here as the ingestion runtime does.
__all__ = [
    "DecisionPlan",
    "DecisionService",
    "DecisionStore",
    "NeighbourFinder",
    "PlannedWrite",
    "WriteContext",
    "WriteReport",
]

_log = logging.getLogger(__name__)


@runtime_checkable
class NeighbourFinder(Protocol):
    """Decision-purpose retrieval (evidence mode): for each text, the most similar live
    claims of exactly `scope`, best first. Supplied by the retrieval service."""

    async def find(
        self,
        agent_id: str,
        scope: Scope,
        texts: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[Claim]]: ...


class DecisionService:
    """Decides and stores one batch of candidates for one agent and scope.

    llm mode needs both `gateway` (with a text provider) and `neighbours`; without them
    every candidate takes the deterministic path (provenance dedup, tombstones, slots).
    """

    def __init__(
        self,
        store: DecisionStore,
        *,
        gateway: ProviderGateway | None = None,
        neighbours: NeighbourFinder | None = None,
        settings: MemorySettings,
    ) -> None:
        self._writer = PlanWriter(store)
        self._gateway = gateway
        self._neighbours = neighbours
        self._max_code_points = settings.extracted_claim_max_code_points
        self._max_neighbours = settings.decision_neighbours
        self._max_batches = settings.decision_max_batches
        self._per_prompt = settings.decision_candidates_per_prompt
        self._known_code_points = settings.decision_known_code_points
        self._prompt_tokens = settings.decision_prompt_tokens

    @property
    def llm_mode(self) -> bool:
        return self._gateway is not None and self._neighbours is not None

    # --- plan -----------------------------------------------------------------------------
    async def plan(
        self,
        context: WriteContext,
        result: ExtractionResult,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> DecisionPlan:
        prepared = prepare_candidates(
            context, result.candidates, max_code_points=self._max_code_points
        )
        writes = [PlannedWrite(action=DecisionAction.ADD, draft=d) for d in prepared.drafts]
        fallbacks = 0
        # A slotted candidate is decided by its slot, deterministically, at apply time.
        open_indexes = [i for i, draft in enumerate(prepared.drafts) if draft.slot is None]
        if self.llm_mode and open_indexes:
            fallbacks = await self._decide(context, writes, open_indexes, deadline, cancel)
        return DecisionPlan(
            context=context,
            writes=tuple(writes),
            suggestions=result.suggestions,
            rejected=(*(reason.value for reason in result.rejected), *prepared.rejected),
            merged_in_batch=prepared.merged,
            decision_fallbacks=fallbacks,
        )

    async def _decide(
        self,
        context: WriteContext,
        writes: list[PlannedWrite],
        indexes: Sequence[int],
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        """Fill `writes` at `indexes` with model decisions; returns how many fell back to ADD."""
        assert self._gateway is not None and self._neighbours is not None
        try:
            found = await self._neighbours.find(
                context.agent_id,
                context.scope,
                [writes[i].draft.content for i in indexes],
                deadline=deadline,
                cancel=cancel,
            )
        except (DeadlineExceeded, OperationCancelled):
            raise
        except Exception as exc:  # a retrieval fault costs the merge, never the facts
            _log.warning("decision neighbours unavailable: %s", type(exc).__name__)
            return len(indexes)
        pending: list[tuple[int, tuple[Claim, ...]]] = []
        for position, index in enumerate(indexes):
            draft = writes[index].draft
            neighbours = _same_scope(context, found[position] if position < len(found) else ())[
                : self._max_neighbours
            ]
            if any(
                (claim.kind, claim.canonical_content) == (draft.kind, draft.content)
                for claim in neighbours
            ):
                continue  # an exact replay: the store answers DUPLICATE without asking anyone
            if neighbours:  # no neighbour: nothing to decide against, plain ADD
                pending.append((index, neighbours))
        batches = [
            pending[start : start + self._per_prompt]
            for start in range(0, len(pending), self._per_prompt)
        ]
        fallbacks = sum(len(batch) for batch in batches[self._max_batches :])
        for batch in batches[: self._max_batches]:
            fallbacks += await self._decide_batch(context, writes, batch, deadline, cancel)
        return fallbacks

    async def _decide_batch(
        self,
        context: WriteContext,
        writes: list[PlannedWrite],
        batch: Sequence[tuple[int, tuple[Claim, ...]]],
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        assert self._gateway is not None
        items = fit_items(
            [
                DecisionItem(
                    kind=writes[index].draft.kind.value,
                    content=writes[index].draft.content,
                    annotation=_annotation(writes[index].draft.temporal, context.now),
                    known=[
                        KnownMemory(
                            content=c.content[: self._known_code_points],
                            annotation=_annotation(c.temporal, context.now),
                        )
                        for c in neighbours
                    ],
                )
                for index, neighbours in batch
            ],
            max_tokens=self._prompt_tokens,
        )
        try:
            text = await self._gateway.complete(
                agent_id=context.agent_id,
                request=build_decision_request(items, max_candidates=self._per_prompt),
                deadline=deadline,
                cancel=cancel,
                purpose=TextPurpose.DECISION,
            )
        except ProviderError as exc:
            _log.warning("decision call failed: %s", type(exc).__name__)
            return len(batch)
        decisions = parse_decisions(text, items, max_merged_code_points=self._max_code_points)
        for (index, neighbours), decision in zip(batch, decisions, strict=True):
            writes[index] = _planned(writes[index].draft, decision, neighbours)
        return sum(1 for decision in decisions if decision.defaulted)

    # --- apply ----------------------------------------------------------------------------
    def apply(self, plan: DecisionPlan) -> WriteReport:
        """Carry out `plan`. Call under the agent's write lock, after re-checking the fence.
        Store faults other than a rejected candidate propagate (the chunk then fails)."""
        return self._writer.apply(plan)


def _same_scope(context: WriteContext, claims: Sequence[Claim]) -> tuple[Claim, ...]:
    """Neighbours a decision may target: live, this owner, exactly this scope (R-SCOPE-3)."""
    return tuple(
        claim
        for claim in claims
        if claim.agent_id == context.agent_id
        and claim.scope == context.scope
        and claim.is_recallable
    )


def _annotation(temporal: TemporalMetadata, now: datetime) -> str | None:
    return assess(temporal, now, mode=TemporalMode.EVIDENCE).annotation


def _planned(draft: ClaimDraft, decision: Decision, neighbours: Sequence[Claim]) -> PlannedWrite:
    action = decision.action
    if decision.target_index is None or action in (DecisionAction.ADD, DecisionAction.NOOP):
        return PlannedWrite(action=action, draft=draft)
    target = neighbours[decision.target_index]
    if action is DecisionAction.CHALLENGE:
        return PlannedWrite(action=action, draft=draft, target=target)
    content = canonical_content(decision.merged_content or draft.content)
    merged = attrs.evolve(
        draft,
        content=content,
        category=draft.category or target.category,
        slot=draft.slot or target.slot,
        temporal=reconcile_merged(
            content,
            existing_content=target.content,
            existing=target.temporal,
            incoming_content=draft.content,
            incoming=draft.temporal,
        ),
    )
    return PlannedWrite(action=action, draft=merged, target=target)
