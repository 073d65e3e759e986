"""How time affects recall: eligibility, score factor, status, label and annotation (R-TIME-3).

Reproduces DeepChat's temporal policy (reference §4.5) so its behaviour fixtures hold: in
`current` mode high-confidence out-of-window states are filtered, low-confidence ones fail open
with a lower factor and a qualified annotation; `evidence` mode sees everything at factor 1 with
the same labels, because a time filter is never a physical delete. Also holds the
working-projection section mapping (§8.7). Stored/legacy rows are read by
`memory_core.domain.stored_temporal` (R-TIME-4).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Protocol
from zoneinfo import ZoneInfo

import attrs

from memory_core.domain.errors import TemporalError
from memory_core.domain.temporal import (
    Precision,
    Relation,
    TemporalKind,
    TemporalMetadata,
    require_utc,
)

__all__ = [
    "MISSING_CONFIDENCE",
    "TemporalAssessment",
    "TemporalMode",
    "TemporalPolicy",
    "TemporalStatus",
    "TemporalTunables",
    "WorkingSection",
    "assess",
    "assessor",
    "render_bound",
    "working_section_for",
    "working_status_rank",
]

MISSING_CONFIDENCE = 0.5
"""Temporal confidence assumed when none is stored (reference §4.5)."""


class TemporalMode(StrEnum):
    """`current` for recall and injection; `evidence` for decision and management search."""

    CURRENT = "current"
    EVIDENCE = "evidence"


class TemporalStatus(StrEnum):
    """Where a claim stands in time, per kind (reference §3.3)."""

    ATEMPORAL = "atemporal"
    CURRENT = "current"
    UNDATED = "undated"
    FUTURE = "future"
    EXPIRED = "expired"
    HISTORICAL = "historical"
    FUTURE_EVENT = "future_event"
    PLANNED = "planned"
    PREVIOUSLY_PLANNED = "previously_planned"
    RECURRING = "recurring"
    FUTURE_RECURRENCE = "future_recurrence"
    ENDED_RECURRENCE = "ended_recurrence"


def _unit(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise TemporalError(f"temporal_policy.{attribute.name}", "must be a number in [0, 1]")


class TemporalTunables(Protocol):
    """The two thresholds `MemorySettings` tunes. The domain names only what it reads, so it
    stays below the settings layer; `MemorySettings` is one of these."""

    @property
    def temporal_hard_filter_confidence(self) -> float: ...

    @property
    def temporal_uncertain_factor(self) -> float: ...


@attrs.frozen(kw_only=True)
class TemporalPolicy:
    """The constants of reference §4.5; the first two are tunable through `MemorySettings`."""

    hard_filter_confidence: float = attrs.field(default=0.8, validator=_unit)
    uncertain_factor: float = attrs.field(default=0.65, validator=_unit)
    undated_factor: float = attrs.field(default=0.9, validator=_unit)
    previously_planned_factor: float = attrs.field(default=0.85, validator=_unit)
    ended_recurrence_factor: float = attrs.field(default=0.9, validator=_unit)

    @classmethod
    def from_settings(cls, settings: TemporalTunables) -> TemporalPolicy:
        return cls(
            hard_filter_confidence=settings.temporal_hard_filter_confidence,
            uncertain_factor=settings.temporal_uncertain_factor,
        )


@attrs.frozen(kw_only=True)
class TemporalAssessment:
    """The policy's verdict on one claim at one instant.

    `qualified` marks the low-confidence readings whose annotation states the confidence (the
    "(+confidence)" rows of reference §4.5); `label` and `annotation` are None only for
    atemporal claims.
    """

    eligible: bool
    factor: float
    status: TemporalStatus
    label: str | None
    qualified: bool
    annotation: str | None


_ATEMPORAL_ASSESSMENT = TemporalAssessment(
    eligible=True,
    factor=1.0,
    status=TemporalStatus.ATEMPORAL,
    label=None,
    qualified=False,
    annotation=None,
)


def assess(
    metadata: TemporalMetadata,
    now: datetime,
    *,
    mode: TemporalMode = TemporalMode.CURRENT,
    policy: TemporalPolicy | None = None,
) -> TemporalAssessment:
    """Judge `metadata` at `now` (aware) under `mode` — reference §4.5 row by row."""
    now = require_utc(now, "now")
    if metadata.is_atemporal:
        return _ATEMPORAL_ASSESSMENT
    return _judge(metadata, now, _is_evidence(mode), policy or TemporalPolicy())


def assessor(
    now: datetime,
    *,
    mode: TemporalMode = TemporalMode.CURRENT,
    policy: TemporalPolicy | None = None,
) -> Callable[[TemporalMetadata], TemporalAssessment]:
    """`assess` at one instant for many claims: `now`, `mode` and `policy` are checked once,
    not once per candidate of a turn."""
    now = require_utc(now, "now")
    evidence = _is_evidence(mode)
    policy = policy or TemporalPolicy()

    def judge(metadata: TemporalMetadata) -> TemporalAssessment:
        if metadata.is_atemporal:
            return _ATEMPORAL_ASSESSMENT
        return _judge(metadata, now, evidence, policy)

    return judge


def _is_evidence(mode: TemporalMode) -> bool:
    try:
        return TemporalMode(mode) is TemporalMode.EVIDENCE
    except ValueError as exc:
        raise TemporalError("mode", "must be 'current' or 'evidence'") from exc


def _judge(
    metadata: TemporalMetadata, now: datetime, evidence: bool, policy: TemporalPolicy
) -> TemporalAssessment:
    relation = metadata.interval.relation(now)
    trusted = _confidence(metadata) >= policy.hard_filter_confidence

    def verdict(
        status: TemporalStatus,
        label: str,
        factor: float,
        *,
        eligible: bool = True,
        qualified: bool = False,
    ) -> TemporalAssessment:
        return TemporalAssessment(
            eligible=eligible or evidence,
            factor=1.0 if evidence else factor,
            status=status,
            label=label,
            qualified=qualified,
            annotation=_annotation(label, metadata, with_confidence=qualified),
        )

    if metadata.kind is TemporalKind.STATE:
        if relation in (Relation.EXPIRED, Relation.FUTURE):
            status = TemporalStatus(relation.value)
            if trusted:
                label = "expired state" if relation is Relation.EXPIRED else "future state"
                return verdict(status, label, 0.0, eligible=False)
            label = (
                "possibly outdated state"
                if relation is Relation.EXPIRED
                else "possibly not yet effective state"
            )
            return verdict(status, label, policy.uncertain_factor, qualified=True)
        if relation is Relation.UNDATED:
            return verdict(
                TemporalStatus.UNDATED,
                "state with unspecified validity",
                policy.undated_factor,
                qualified=True,
            )
        return verdict(TemporalStatus.CURRENT, "current state", 1.0)
    if metadata.kind is TemporalKind.EVENT:
        if relation is Relation.FUTURE:
            return verdict(TemporalStatus.FUTURE_EVENT, "future-dated event", 1.0)
        return verdict(TemporalStatus.HISTORICAL, "historical event", 1.0)
    if metadata.kind is TemporalKind.PLAN:
        if relation is Relation.EXPIRED:
            # A plan whose window passed never proves it happened.
            return verdict(
                TemporalStatus.PREVIOUSLY_PLANNED,
                "previously planned",
                policy.previously_planned_factor,
            )
        return verdict(TemporalStatus.PLANNED, "plan", 1.0)
    if relation is Relation.EXPIRED:
        return verdict(
            TemporalStatus.ENDED_RECURRENCE,
            "recurring; known window ended",
            policy.ended_recurrence_factor,
        )
    if relation is Relation.FUTURE:
        return verdict(
            TemporalStatus.FUTURE_RECURRENCE, "recurring; known window starts in the future", 1.0
        )
    return verdict(TemporalStatus.RECURRING, "recurring", 1.0)


def _confidence(metadata: TemporalMetadata) -> float:
    return MISSING_CONFIDENCE if metadata.confidence is None else float(metadata.confidence)


def _annotation(label: str, metadata: TemporalMetadata, *, with_confidence: bool) -> str:
    details = [f"Temporal: {label}", _interval_phrase(metadata)]
    if metadata.precision in (None, Precision.UNKNOWN):
        details.append("approximate")
    if with_confidence:
        details.append(f"confidence {_two_decimals(_confidence(metadata))}")
    return "[" + "; ".join(details) + "]"


def _two_decimals(value: float) -> str:
    # JavaScript's toFixed rounds the exact binary value half up (0.125 -> "0.13"); Python's
    # format rounds half to even ("0.12"). The fixtures were written against toFixed.
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _interval_phrase(metadata: TemporalMetadata) -> str:
    precision = metadata.precision or Precision.UNKNOWN
    zone = metadata.timezone or "UTC"
    start, end = metadata.interval.valid_from, metadata.interval.valid_until
    rendered_from = None if start is None else render_bound(start, precision, zone)
    rendered_until = None if end is None else render_bound(end, precision, zone)
    if rendered_from and rendered_until:
        return f"from {rendered_from} until {rendered_until} ({zone})"
    if rendered_from:
        return f"from {rendered_from} ({zone})"
    if rendered_until:
        return f"until {rendered_until} ({zone})"
    return "validity window unspecified"


def render_bound(instant: datetime, precision: Precision, zone: str) -> str:
    """Render one bound in the claim's zone, as finely as its precision claims."""
    instant = require_utc(instant, "instant")
    try:
        local = instant.astimezone(ZoneInfo(zone))
    except OverflowError:
        # Only at the ends of the calendar; DeepChat falls back to ISO-8601 UTC the same way.
        return instant.strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"
    year = f"{local.year:04d}"
    if precision is Precision.YEAR:
        return year
    if precision is Precision.QUARTER:
        return f"{year}-Q{(local.month - 1) // 3 + 1}"
    if precision is Precision.MONTH:
        return f"{year}-{local.month:02d}"
    date = f"{year}-{local.month:02d}-{local.day:02d}"
    if precision in (Precision.DAY, Precision.WEEK):
        return date
    if precision is Precision.HOUR:
        return f"{date} {local.hour:02d}:00"
    if precision is Precision.MINUTE:
        return f"{date} {local.hour:02d}:{local.minute:02d}"
    return f"{date} {local.hour:02d}:{local.minute:02d}:{local.second:02d}"


# --- working projection (reference §8.7, R-READ-9) -------------------------------------------


class WorkingSection(StrEnum):
    """Sections of the working projection, in rendering order (R-READ-9).

    The value is the section heading DeepChat renders. Reflections are chosen by the caller
    from the claim kind; the rest follow from the temporal assessment.
    """

    CURRENT_STATES = "Current high-confidence states"
    QUALIFIED_STATES = "Qualified states"
    STABLE_FACTS = "Stable preferences and facts"
    RECENT_EVENTS = "Recent events"
    PLANS_AND_RECURRING = "Plans and recurring items"
    REFLECTIONS = "High-level reflections"

    @property
    def order(self) -> int:
        return list(WorkingSection).index(self)


def working_section_for(
    assessment: TemporalAssessment,
    metadata: TemporalMetadata,
    *,
    policy: TemporalPolicy | None = None,
) -> WorkingSection | None:
    """Section of a non-reflection claim given its current-mode assessment; None = dropped."""
    if not assessment.eligible:
        return None
    status = assessment.status
    if status is TemporalStatus.ATEMPORAL:
        return WorkingSection.STABLE_FACTS
    if metadata.kind is TemporalKind.STATE:
        threshold = (policy or TemporalPolicy()).hard_filter_confidence
        if status is TemporalStatus.CURRENT and _confidence(metadata) >= threshold:
            return WorkingSection.CURRENT_STATES
        return WorkingSection.QUALIFIED_STATES
    if status is TemporalStatus.HISTORICAL:
        return WorkingSection.RECENT_EVENTS
    return WorkingSection.PLANS_AND_RECURRING


_STATUS_RANK = {
    # Qualified states: the most usable reading first.
    TemporalStatus.CURRENT: 0,
    TemporalStatus.UNDATED: 1,
    TemporalStatus.EXPIRED: 2,
    TemporalStatus.FUTURE: 3,
    # Plans: what is still ahead before what has lapsed.
    TemporalStatus.PLANNED: 0,
    TemporalStatus.FUTURE_EVENT: 1,
    TemporalStatus.RECURRING: 2,
    TemporalStatus.FUTURE_RECURRENCE: 3,
    TemporalStatus.PREVIOUSLY_PLANNED: 4,
    TemporalStatus.ENDED_RECURRENCE: 5,
}


def working_status_rank(status: TemporalStatus) -> int:
    """Sort key of a status inside its working section (reference §8.7); 0 where unranked."""
    return _STATUS_RANK.get(status, 0)
