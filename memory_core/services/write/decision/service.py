"""The write decision step: from an extractor's candidates to stored claims (reference §7.4).

Two halves, so that the slow part never holds the agent's write lock:
- `DecisionService.plan` (async, no lock): normalise candidates, reject over-long ones, merge
  duplicates of one batch with temporal reconciliation (§7.6), and — in llm mode — ask the
  text provider for ADD/UPDATE/SUPERSEDE/NOOP/CHALLENGE against same-scope neighbours;
- `DecisionService.apply` (sync, under the lock): carry the plan out against the store. Exact
  replays come back DUPLICATE and tombstoned text SUPPRESSED from the store's own insert
  transaction (R-WRITE-4); a candidate with a `slot` supersedes the live claim holding that
  slot in the same scope (`ClaimReader.find_live_by_slot`), with its lineage edge, in one
  `ClaimWriter.supersede` transaction (R-LINEAGE-1) — which revives the retired row when the
  candidate returns to an earlier value (Paris → Berlin → Paris). Nothing ever crosses
  scopes (R-SCOPE-3). Directive suggestions become drafts only (R-DIR-1).

The result is a `WriteReport` of ids and counts, never content.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from enum import Enum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim, ClaimDraft
from memory_core.domain.errors import (
    DeadlineExceeded,
    NotFound,
    OperationCancelled,
    ProviderError,
    RevisionConflict,
    SecretRejected,
    ValidationError,
)
from memory_core.domain.provenance import canonical_content
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import Precision, TemporalMetadata
from memory_core.domain.temporal_policy import TemporalMode, assess
from memory_core.ports.claims import (
    ClaimReader,
    ClaimWriter,
    Conflicts,
    DirectiveStore,
    InsertOutcome,
    InsertStatus,
)
from memory_core.ports.extraction import DirectiveSuggestion, ExtractionResult, RejectionReason
from memory_core.services.providers.gateway.service import ProviderGateway, TextPurpose
from memory_core.services.write.decision.candidates import (
    WriteContext,
    prepare_candidates,
    reconcile_merged,
)
from memory_core.services.write.decision.prompt import (
    Decision,
    DecisionAction,
    DecisionItem,
    KnownMemory,
    build_decision_request,
    fit_items,
    parse_decisions,
)
from memory_core.settings import MemorySettings

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

# Live holders of one slot a candidate retires at most. Normally one; more exist only when
# rows were written around the decision step, and each round retires one of them.
_MAX_SLOT_HOLDERS = 16


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


@attrs.frozen(kw_only=True)
class PlannedWrite:
    """One candidate's fate. `target` is the same-scope claim a targeted decision names."""

    action: DecisionAction
    draft: ClaimDraft
    target: Claim | None = None


@attrs.frozen(kw_only=True)
class DecisionPlan:
    context: WriteContext
    writes: tuple[PlannedWrite, ...]
    suggestions: tuple[DirectiveSuggestion, ...] = ()
    rejected: tuple[str, ...] = ()  # reason codes (extractor's and ours)
    merged_in_batch: int = 0
    decision_fallbacks: int = 0


@attrs.frozen(kw_only=True)
class WriteReport:
    """What one batch did, as ids and counts only (safe for logs, audit and anchors)."""

    stored_ids: tuple[str, ...] = ()
    superseded: tuple[tuple[str, str], ...] = ()  # (retired id, successor id)
    duplicate_ids: tuple[str, ...] = ()  # existing rows an exact replay matched
    revived_ids: tuple[str, ...] = ()  # retired rows a candidate returned to, live again
    updated: int = 0
    noop: int = 0
    challenged: int = 0
    suppressed: int = 0
    merged_in_batch: int = 0
    decision_fallbacks: int = 0
    rejected: tuple[tuple[str, int], ...] = ()  # (reason, count), sorted by reason
    directive_drafts: tuple[str, ...] = ()

    @property
    def rejected_total(self) -> int:
        return sum(count for _, count in self.rejected)

    def rejected_count(self, reason: str) -> int:
        return dict(self.rejected).get(str(reason), 0)

    def payload(self) -> dict[str, object]:
        return {
            "memoryIds": list(self.stored_ids),
            "count": len(self.stored_ids),
            "superseded": [list(pair) for pair in self.superseded],
            "duplicates": len(self.duplicate_ids),
            "revived": list(self.revived_ids),
            "updated": self.updated,
            "noop": self.noop,
            "challenged": self.challenged,
            "suppressed": self.suppressed,
            "mergedInBatch": self.merged_in_batch,
            "decisionFallbacks": self.decision_fallbacks,
            "rejected": dict(self.rejected),
            "directiveDrafts": list(self.directive_drafts),
        }


# --- the service --------------------------------------------------------------------------


class _Retired(Enum):
    DONE = "done"  # the successor is stored (new, existing or revived); the holder points at it
    MOVED = "moved"  # the holder changed meanwhile (revision CAS lost, gone): nothing written
    STOPPED = "stopped"  # the successor was refused (tombstone, secret policy, archived twin)


class _Tally:
    """Mutable counters of one `apply`; frozen into a WriteReport at the end."""

    def __init__(self) -> None:
        self.stored: list[str] = []
        self.superseded: list[tuple[str, str]] = []
        self.duplicates: list[str] = []
        self.revived: list[str] = []
        self.rejected: Counter[str] = Counter()
        self.drafts: list[str] = []
        self.updated = self.noop = self.challenged = self.suppressed = 0

    def record(self, outcome: InsertOutcome) -> None:
        if outcome.status is InsertStatus.SUPPRESSED:
            self.suppressed += 1
        elif outcome.claim is None:
            return
        elif outcome.status is InsertStatus.INSERTED:
            self.stored.append(outcome.claim.id)
        elif outcome.status is InsertStatus.REVIVED:
            if outcome.claim.id not in self.revived:
                self.revived.append(outcome.claim.id)
        elif outcome.claim.id not in self.stored and outcome.claim.id not in self.duplicates:
            self.duplicates.append(outcome.claim.id)


@runtime_checkable
class DecisionStore(ClaimReader, ClaimWriter, Conflicts, DirectiveStore, Protocol):
    """The roles the decision step writes through: slot lookup, inserts, supersede,
    challenges and directive suggestions."""


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
        self._store = store
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
        """Fill `writes` with model decisions; returns how many fell back to ADD."""
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
        context, tally = plan.context, _Tally()
        tally.rejected.update(plan.rejected)
        adds: list[ClaimDraft] = []
        # In the order things were said, so that of two states of one slot in one batch the
        # later-said one is written last and retires the earlier (stable: ties keep the
        # extractor's order).
        for write in sorted(plan.writes, key=_said_order):
            action = write.action
            if action is DecisionAction.NOOP:
                tally.noop += 1
            elif action in (DecisionAction.UPDATE, DecisionAction.SUPERSEDE):
                assert write.target is not None
                retired, _ = self._retire(context, write.target, write.draft, tally)
                if retired is _Retired.MOVED:
                    tally.noop += 1  # a concurrent update won; the next pass decides again
                elif retired is _Retired.DONE and action is DecisionAction.UPDATE:
                    tally.updated += 1
            elif action is DecisionAction.CHALLENGE and write.target is not None:
                tally.challenged += 1
                if not self._challenge(context, write.target, write.draft, tally):
                    adds.append(write.draft)  # the target moved: a plain add, as before
            elif write.draft.slot is not None:
                self._slot_write(context, write.draft, tally)
            else:
                tally.challenged += action is DecisionAction.CHALLENGE
                adds.append(write.draft)
        self._insert_all(context, adds, tally)
        self._suggest(context, plan.suggestions, tally)
        return WriteReport(
            stored_ids=tuple(tally.stored),
            superseded=tuple(tally.superseded),
            duplicate_ids=tuple(tally.duplicates),
            revived_ids=tuple(tally.revived),
            updated=tally.updated,
            noop=tally.noop,
            challenged=tally.challenged,
            suppressed=tally.suppressed,
            merged_in_batch=plan.merged_in_batch,
            decision_fallbacks=plan.decision_fallbacks,
            rejected=tuple(sorted(tally.rejected.items())),
            directive_drafts=tuple(tally.drafts),
        )

    def _retire(
        self, context: WriteContext, old: Claim, draft: ClaimDraft, tally: _Tally
    ) -> tuple[_Retired, str | None]:
        """Supersede `old` by `draft` in one transaction (successor, retirement and lineage);
        the store inserts the draft, or points at its live twin, or revives its retired one.
        Returns what happened and, when DONE, the successor's id."""
        if old.agent_id != context.agent_id or old.scope != context.scope:
            return _Retired.MOVED, None  # never across owners or scopes (R-SCOPE-3)
        try:
            outcome = self._store.supersede(
                context.agent_id,
                old.id,
                draft,
                expected_revision=old.revision,
                now=context.now,
                origin=context.origin,
            )
        except (RevisionConflict, NotFound):
            return _Retired.MOVED, None
        except SecretRejected:
            tally.rejected[RejectionReason.SECRET.value] += 1
            return _Retired.STOPPED, None
        tally.record(outcome)
        if outcome.claim is None or not outcome.claim.is_recallable:
            # Suppressed by a tombstone, or the twin is archived (the user's forget stands):
            # the store kept `old` as it was.
            return _Retired.STOPPED, None
        if outcome.claim.id != old.id:
            tally.superseded.append((old.id, outcome.claim.id))
            if outcome.status is InsertStatus.REVIVED:
                _log.info("decision: claim %s revived over %s", outcome.claim.id, old.id)
        return _Retired.DONE, outcome.claim.id

    def _challenge(
        self, context: WriteContext, target: Claim, draft: ClaimDraft, tally: _Tally
    ) -> bool:
        """Store the draft as a challenger of `target` (a conflict record, resolved later
        by the user or maintenance, reference §7.8); False when the target moved or is of
        another scope or kind, so the caller adds the draft plainly."""
        if target.agent_id != context.agent_id or target.scope != context.scope:
            return False  # never across owners or scopes (R-SCOPE-3)
        try:
            outcome = self._store.challenge(
                context.agent_id,
                target.id,
                draft,
                expected_revision=target.revision,
                origin=context.origin,
                now=context.now,
            )
        except (RevisionConflict, NotFound):
            return False
        except SecretRejected:
            tally.rejected[RejectionReason.SECRET.value] += 1
            return True
        except ValidationError:
            return False
        tally.record(outcome)
        return True

    def _slot_write(self, context: WriteContext, draft: ClaimDraft, tally: _Tally) -> None:
        """A slot holds one value: the candidate retires the live holder of its slot in its
        scope — the store answers with the successor: the draft inserted, its live twin, or
        its retired row revived — or is inserted when there is none. Holders left by writes
        around this step are retired in turn, newest first, until the lookup answers with
        the successor itself (one newer than the successor can hide older ones from it)."""
        assert draft.slot is not None
        successor: str | None = None
        for _ in range(_MAX_SLOT_HOLDERS):
            holder = self._store.find_live_by_slot(context.agent_id, context.scope, draft.slot)
            if holder is None:
                if successor is None:
                    self._insert_all(context, [draft], tally)
                return
            if holder.id == successor:
                return
            if successor is None and _predates(draft, holder, said_at=context.said_at):
                # Older evidence — a replayed or belated message about an earlier time —
                # never retires the state that followed it (R-TIME-1): "lived in Paris"
                # dated March does not undo "lives in Berlin" since April.
                tally.noop += 1
                return
            retired, found = self._retire(context, holder, draft, tally)
            if retired is _Retired.STOPPED:
                return
            if retired is _Retired.DONE:
                successor = found
            # MOVED: the holder changed under a concurrent writer; look the slot up again.
        tally.noop += 1
        _log.warning("decision: slot still held after %d rounds", _MAX_SLOT_HOLDERS)

    def _insert_all(self, context: WriteContext, drafts: list[ClaimDraft], tally: _Tally) -> None:
        if not drafts:
            return
        try:
            outcomes = self._store.insert_many(drafts, origin=context.origin, now=context.now)
        except ValidationError:
            # One draft the store refused (e.g. its secret policy) rolled the batch back;
            # store the others one by one so a single bad candidate never fails the batch.
            outcomes = []
            for draft in drafts:
                try:
                    outcomes.append(
                        self._store.insert(draft, origin=context.origin, now=context.now)
                    )
                except SecretRejected:
                    tally.rejected[RejectionReason.SECRET.value] += 1
                except ValidationError:
                    tally.rejected[RejectionReason.INVALID_CANDIDATE.value] += 1
        for outcome in outcomes:
            tally.record(outcome)

    def _suggest(
        self, context: WriteContext, suggestions: Sequence[DirectiveSuggestion], tally: _Tally
    ) -> None:
        for suggestion in suggestions:
            try:
                directive = self._store.suggest_directive(
                    context.agent_id,
                    suggestion.kind,
                    suggestion.content,
                    topic=suggestion.topic,
                    now=context.now,
                )
            except SecretRejected:
                tally.rejected[RejectionReason.SUGGESTION_SECRET.value] += 1
                continue
            except ValidationError:
                tally.rejected[RejectionReason.INVALID_SUGGESTION.value] += 1
                continue
            if directive is not None:
                tally.drafts.append(directive.id)


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


def _said_order(write: PlannedWrite) -> int:
    seq = write.draft.source.last_order_seq
    return -1 if seq is None else seq


def _predates(draft: ClaimDraft, holder: Claim, *, said_at: datetime | None) -> bool:
    """The draft is older evidence than the live holder.

    Within one session the message order decides: a holder said later is newer, one said
    earlier — in this very batch too — is not, whenever either was written. Across sessions,
    a draft whose messages are dated (`said_at`, a backdated import) before the holder was
    learned is older; an undated draft was said now and is never older by time. Either way,
    a draft whose validity starts before the holder's known start is older. A holder whose
    start has precision `unknown` only says when it was heard, not when it began, so that
    start never blocks a correction."""
    same_session = (
        draft.source.session_id is not None
        and draft.source.session_id == holder.source.session_id
        and draft.source.last_order_seq is not None
        and holder.source.last_order_seq is not None
    )
    if same_session:
        if draft.source.last_order_seq < holder.source.last_order_seq:  # type: ignore[operator]
            return True
    elif said_at is not None and said_at < holder.created_at:
        return True
    start = draft.temporal.interval.valid_from
    held = holder.temporal.interval.valid_from
    return (
        start is not None
        and held is not None
        and holder.temporal.precision is not Precision.UNKNOWN
        and start < held
    )
