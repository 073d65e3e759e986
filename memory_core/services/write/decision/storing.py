"""The store half of the decision step: a plan carried out under the agent's write lock.

Exact replays come back DUPLICATE and tombstoned text SUPPRESSED from the store's own insert
transaction (R-WRITE-4); a candidate with a `slot` supersedes the live claim holding that
slot in the same scope (`ClaimReader.find_live_by_slot`), with its lineage edge, in one
`ClaimWriter.supersede` transaction (R-LINEAGE-1) — which revives the retired row when the
candidate returns to an earlier value (Paris → Berlin → Paris). Nothing ever crosses scopes
(R-SCOPE-3). Directive suggestions become drafts only (R-DIR-1).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from enum import Enum
from typing import Protocol, runtime_checkable

from memory_core.domain.claims import Claim, ClaimDraft
from memory_core.domain.errors import (
    NotFound,
    RevisionConflict,
    SecretRejected,
    ValidationError,
)
from memory_core.domain.temporal import Precision
from memory_core.ports.claims import (
    ClaimReader,
    ClaimWriter,
    Conflicts,
    DirectiveStore,
    InsertStatus,
)
from memory_core.ports.extraction import DirectiveSuggestion, RejectionReason
from memory_core.services.write.decision.candidates import WriteContext
from memory_core.services.write.decision.plan import DecisionPlan, PlannedWrite
from memory_core.services.write.decision.prompt import DecisionAction
from memory_core.services.write.decision.report import Tally, WriteReport

__all__ = ["DecisionStore", "PlanWriter"]

_log = logging.getLogger(__name__)

# Live holders of one slot a candidate retires at most. Normally one; more exist only when
# rows were written around the decision step, and each round retires one of them.
_MAX_SLOT_HOLDERS = 16


@runtime_checkable
class DecisionStore(ClaimReader, ClaimWriter, Conflicts, DirectiveStore, Protocol):
    """The roles the decision step writes through: slot lookup, inserts, supersede,
    challenges and directive suggestions."""


class _Retired(Enum):
    DONE = "done"  # the successor is stored (new, existing or revived); the holder points at it
    MOVED = "moved"  # the holder changed meanwhile (revision CAS lost, gone): nothing written
    STOPPED = "stopped"  # the successor was refused (tombstone, secret policy, archived twin)


class PlanWriter:
    """Carries out decision plans against the store."""

    def __init__(self, store: DecisionStore) -> None:
        self._store = store

    def apply(self, plan: DecisionPlan) -> WriteReport:
        context, tally = plan.context, Tally(plan)
        adds: list[ClaimDraft] = []
        named = Counter(write.draft.slot for write in plan.writes if write.draft.slot)
        # In the order things were said, so that of two states of one slot in one batch the
        # later-said one is written last and retires the earlier (stable: ties keep the
        # extractor's order).
        for write in sorted(plan.writes, key=lambda planned: planned.said_order):
            self._carry_out(context, write, adds, tally, shared=named[write.draft.slot] > 1)
        self._insert_all(context, adds, tally)
        self._suggest(context, plan.suggestions, tally)
        return tally.report()

    def _carry_out(
        self,
        context: WriteContext,
        write: PlannedWrite,
        adds: list[ClaimDraft],
        tally: Tally,
        *,
        shared: bool,
    ) -> None:
        """One planned write; plain additions are collected in `adds` for one insert.
        `shared`: another write of the plan names the draft's slot."""
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
            self._slot_write(context, write.draft, tally, adds=None if shared else adds)
        else:
            tally.challenged += action is DecisionAction.CHALLENGE
            adds.append(write.draft)

    def _retire(
        self, context: WriteContext, old: Claim, draft: ClaimDraft, tally: Tally
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
        self, context: WriteContext, target: Claim, draft: ClaimDraft, tally: Tally
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

    def _slot_write(
        self,
        context: WriteContext,
        draft: ClaimDraft,
        tally: Tally,
        *,
        adds: list[ClaimDraft] | None,
    ) -> None:
        """A slot holds one value: the candidate retires the live holder of its slot in its
        scope — the store answers with the successor: the draft inserted, its live twin, or
        its retired row revived — or is inserted when there is none. Holders left by writes
        around this step are retired in turn, newest first, until the lookup answers with
        the successor itself (one newer than the successor can hide older ones from it).

        Given `adds` (no other write of the plan names the slot, so none can look it up
        after this one), a slot nobody holds takes the draft as a plain addition: one
        insert transaction for the plan instead of one per new slot (issue 15)."""
        assert draft.slot is not None
        successor: str | None = None
        for _ in range(_MAX_SLOT_HOLDERS):
            holder = self._store.find_live_by_slot(context.agent_id, context.scope, draft.slot)
            if holder is None:
                if successor is None and adds is not None:
                    adds.append(draft)
                elif successor is None:
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

    def _insert_all(self, context: WriteContext, drafts: list[ClaimDraft], tally: Tally) -> None:
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
        self, context: WriteContext, suggestions: Sequence[DirectiveSuggestion], tally: Tally
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
