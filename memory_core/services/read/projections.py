"""The working-memory projection: a compact, sectioned view of an agent's claims (R-READ-9).

Reference §8.7. From Agent-scope recallable semantic, episodic and reflection claims and `now`:

1. each claim is judged by the current-mode temporal policy; ineligible ones are left out;
   reflections go to their own section, the rest follow `working_section_for`;
2. sections render in the fixed order of `WorkingSection` — current high-confidence states,
   qualified states, stable preferences and facts, recent events, plans and recurring items,
   high-level reflections — each under its `[label]` line, separated by a blank line;
3. inside a section: qualified states by status (current < undated < expired < future); recent
   events newest first; plans by status (planned < future event < recurring < future
   recurrence < previously planned < ended recurrence), upcoming ones soonest first, lapsed ones
   latest first; then importance DESC, access count DESC, created_at DESC, id ASC — a total
   order, so the projection never depends on the order claims were read in;
4. selection is round-robin by rank across sections (every section's first, then every
   second, …) so one busy section cannot starve the others; a line that would overflow the
   token budget is skipped and a later, shorter one may still fit;
5. lines are `- content [annotation]`, continuation lines indented two spaces.

`next_refresh_at` is the earliest interval bound after `now` among all candidates (eligible or
not): the moment some claim changes status and the projection goes stale.

This is the rule a rebuild runs; the turn reads its stored result (`read/working.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import attrs

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.temporal import require_utc
from memory_core.domain.temporal_policy import (
    TemporalAssessment,
    TemporalMode,
    TemporalPolicy,
    TemporalStatus,
    WorkingSection,
    assess,
    working_section_for,
    working_status_rank,
)
from memory_core.domain.tokens import estimate_tokens, token_weight, tokens_for_weight
from memory_core.ports.claims.projection import ProjectionEntry

__all__ = [
    "PROJECTED_KINDS",
    "ProjectionEntry",
    "WorkingProjection",
    "project_working",
]

PROJECTED_KINDS = frozenset({ClaimKind.SEMANTIC, ClaimKind.EPISODIC, ClaimKind.REFLECTION})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Statuses whose time lies behind them: shown latest first, unlike upcoming ones.
_LAPSED = frozenset({TemporalStatus.PREVIOUSLY_PLANNED, TemporalStatus.ENDED_RECURRENCE})
# Weights of the separators `_render` puts between lines ("\n") and sections ("\n\n").
_LINE_BREAK = token_weight("\n")
_SECTION_BREAK = token_weight("\n\n")
_LABEL_WEIGHT = {section: token_weight(f"[{section.value}]") for section in WorkingSection}


@attrs.frozen(kw_only=True)
class WorkingProjection:
    """The rendered projection; `text` is None when nothing is eligible or nothing fits."""

    text: str | None
    entries: tuple[ProjectionEntry, ...]
    estimated_tokens: int
    omitted: int  # eligible claims that did not fit the budget
    next_refresh_at: datetime | None


@attrs.frozen(kw_only=True)
class _Placed:
    claim: Claim
    assessment: TemporalAssessment
    section: WorkingSection
    line: str
    weight: int  # token_weight(line)


def _anchor_time(claim: Claim) -> datetime:
    interval = claim.temporal.interval
    return interval.valid_from or interval.valid_until or claim.created_at


def _tie_break(claim: Claim) -> tuple[float, int, timedelta, str]:
    return (-claim.importance, -claim.access_count, _EPOCH - claim.created_at, claim.id)


def _sort_key(placed: _Placed) -> tuple[object, ...]:
    claim, status = placed.claim, placed.assessment.status
    if placed.section is WorkingSection.QUALIFIED_STATES:
        return (working_status_rank(status), *_tie_break(claim))
    if placed.section is WorkingSection.RECENT_EVENTS:
        return (_EPOCH - _anchor_time(claim), *_tie_break(claim))
    if placed.section is WorkingSection.PLANS_AND_RECURRING:
        when = _anchor_time(claim) - _EPOCH
        return (
            working_status_rank(status),
            -when if status in _LAPSED else when,
            *_tie_break(claim),
        )
    return _tie_break(claim)


def _body(content: str) -> str:
    # splitlines: every break a renderer honours gets the continuation indent.
    return "- " + "\n  ".join(content.strip().splitlines())


# The same claims come back turn after turn, and their text only changes with a new revision:
# each line's weight is measured once. The key holds the content's hash, not the content, so
# no forgotten text outlives its row here, and a store that edits without a new revision
# still gets a fresh measurement. Bounded by starting over when full: a dict's single
# operations are atomic, so turns on several threads need no lock.
_WEIGHTS: dict[tuple[str, int, int], int] = {}
_WEIGHTS_MAX = 16_384


def _body_weight(claim: Claim) -> int:
    key = (claim.id, claim.revision, hash(claim.content))
    weight = _WEIGHTS.get(key)
    if weight is None:
        weight = token_weight(_body(claim.content))
        if len(_WEIGHTS) >= _WEIGHTS_MAX:
            _WEIGHTS.clear()
        _WEIGHTS[key] = weight
    return weight


def _place(claim: Claim, assessment: TemporalAssessment, section: WorkingSection) -> _Placed:
    line = _body(claim.content)
    weight = _body_weight(claim)
    if assessment.annotation:
        line = f"{line} {assessment.annotation}"
        weight += token_weight(f" {assessment.annotation}")
    return _Placed(claim=claim, assessment=assessment, section=section, line=line, weight=weight)


def _render(chosen: Iterable[_Placed]) -> str:
    by_section: dict[WorkingSection, list[str]] = {}
    for placed in chosen:
        by_section.setdefault(placed.section, []).append(placed.line)
    blocks = [
        "\n".join([f"[{section.value}]", *by_section[section]])
        for section in WorkingSection
        if section in by_section
    ]
    return "\n\n".join(blocks)


def _next_refresh(claims: Iterable[Claim], now: datetime) -> datetime | None:
    future = [
        bound
        for claim in claims
        for bound in (claim.temporal.interval.valid_from, claim.temporal.interval.valid_until)
        if bound is not None and bound > now
    ]
    return min(future, default=None)


def project_working(
    claims: Iterable[Claim],
    *,
    now: datetime,
    budget_tokens: int,
    policy: TemporalPolicy,
) -> WorkingProjection:
    """Render the working projection of `claims` at `now` within `budget_tokens`."""
    now = require_utc(now, "now")
    # Only what the projection may show; the store should already have filtered (R-MAINT-3).
    candidates = [
        claim
        for claim in claims
        if claim.is_recallable and claim.scope.is_agent and claim.kind in PROJECTED_KINDS
    ]
    sections: dict[WorkingSection, list[_Placed]] = {section: [] for section in WorkingSection}
    for claim in candidates:
        assessment = assess(claim.temporal, now, mode=TemporalMode.CURRENT, policy=policy)
        if not assessment.eligible:
            continue
        if claim.kind is ClaimKind.REFLECTION:
            section: WorkingSection | None = WorkingSection.REFLECTIONS
        else:
            section = working_section_for(assessment, claim.temporal, policy=policy)
        if section is not None:
            sections[section].append(_place(claim, assessment, section))
    ordered = [sorted(members, key=_sort_key) for members in sections.values()]

    # `_render(chosen)`'s weight, kept up to date line by line: a weight is additive over
    # concatenation, so this equals re-measuring the rendered text (quadratic in the lines).
    chosen: list[_Placed] = []
    shown: set[WorkingSection] = set()
    weight = 0
    omitted = 0
    for rank in range(max((len(members) for members in ordered), default=0)):
        for members in ordered:
            if rank >= len(members):
                continue
            placed = members[rank]
            trial = weight + _LINE_BREAK + placed.weight
            if placed.section not in shown:
                trial += _LABEL_WEIGHT[placed.section] + (_SECTION_BREAK if shown else 0)
            if tokens_for_weight(trial) <= budget_tokens:
                chosen.append(placed)
                shown.add(placed.section)
                weight = trial
            else:
                omitted += 1
    text = _render(chosen) or None
    return WorkingProjection(
        text=text,
        entries=tuple(
            ProjectionEntry(id=p.claim.id, section=p.section, status=p.assessment.status)
            for section in WorkingSection
            for p in chosen
            if p.section is section
        ),
        estimated_tokens=estimate_tokens(text) if text else 0,
        omitted=omitted,
        next_refresh_at=_next_refresh(candidates, now),
    )
