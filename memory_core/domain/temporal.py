"""Temporal metadata of a claim: kind, half-open validity interval, precision, zone, confidence.

Values only; how time affects recall (eligibility, score factor, annotation) lives in
`temporal_policy.py`. Instants are timezone-aware UTC datetimes; the IANA zone records how
the claim was phrased and how its bounds are rendered (R-TIME-1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs

from memory_core.domain.enums import E, member_of
from memory_core.domain.errors import TemporalError

__all__ = [
    "ATEMPORAL",
    "MAX_TIMEZONE_LENGTH",
    "Interval",
    "Precision",
    "Relation",
    "TemporalKind",
    "TemporalMetadata",
    "canonical_timezone",
    "require_utc",
]

MAX_TIMEZONE_LENGTH = 128


class TemporalKind(StrEnum):
    """Closed set of temporal kinds (R-TIME-2)."""

    ATEMPORAL = "atemporal"
    STATE = "state"  # true over an interval
    EVENT = "event"  # happened; stays as historical evidence
    PLAN = "plan"  # intended; once past, only "previously planned"
    RECURRING = "recurring"  # known recurrence window


class Precision(StrEnum):
    """How finely the bounds are known (R-TIME-1).

    `week` and `quarter` are kept so data phrased that way (and DeepChat's rows) round-trip;
    `exact` is accepted on input as DeepChat's name for `instant`.
    """

    INSTANT = "instant"
    MINUTE = "minute"
    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    QUARTER = "quarter"
    YEAR = "year"
    UNKNOWN = "unknown"

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        if isinstance(value, str) and value.strip().lower() == "exact":
            return cls.INSTANT
        return None


class Relation(StrEnum):
    """Where `now` falls relative to an interval."""

    UNDATED = "undated"  # both bounds unknown
    FUTURE = "future"  # now < valid_from
    EXPIRED = "expired"  # now >= valid_until
    CURRENT = "current"


def require_utc(value: datetime, field: str) -> datetime:
    """Return `value` as an aware UTC datetime; naive datetimes are rejected, not guessed."""
    if not isinstance(value, datetime):
        raise TemporalError(field, "must be a datetime")
    if value.tzinfo is UTC:
        return value  # what astimezone(UTC) returns for it, without the call (every stored read)
    if value.tzinfo is None or value.utcoffset() is None:
        raise TemporalError(field, "must be timezone-aware")
    return value.astimezone(UTC)


def canonical_timezone(name: str, field: str = "temporal.timezone") -> str:
    """Validate an IANA zone name and return its canonical key."""
    if not isinstance(name, str) or not name or name != name.strip():
        raise TemporalError(field, "must be a non-blank IANA zone name without padding")
    if len(name) > MAX_TIMEZONE_LENGTH:
        raise TemporalError(field, f"longer than {MAX_TIMEZONE_LENGTH} characters")
    try:
        return ZoneInfo(name).key
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise TemporalError(field, "unknown IANA time zone") from exc


def _closed_enum(enum: type[E], field: str) -> Callable[[object], E]:
    # A bare ValueError from the enum would not name the field (R-DOM-4); the value itself
    # is left out of the message because it may come from model output.
    convert_member = member_of(enum)

    def convert(value: object) -> E:
        try:
            return convert_member(value)
        except (ValueError, TypeError) as exc:
            raise TemporalError(field, f"not a known {enum.__name__}") from exc

    return convert


def _optional_utc(field: str):  # type: ignore[no-untyped-def]
    def convert(value: datetime | None) -> datetime | None:
        return None if value is None else require_utc(value, field)

    return convert


@attrs.frozen(kw_only=True)
class Interval:
    """Half-open validity `[valid_from, valid_until)`; either bound may be unknown."""

    valid_from: datetime | None = attrs.field(
        default=None, converter=_optional_utc("temporal.valid_from")
    )
    valid_until: datetime | None = attrs.field(
        default=None, converter=_optional_utc("temporal.valid_until")
    )

    def __attrs_post_init__(self) -> None:
        if (
            self.valid_from is not None
            and self.valid_until is not None
            and not self.valid_from < self.valid_until
        ):
            raise TemporalError("temporal.valid_until", "must be after valid_from")

    @property
    def is_undated(self) -> bool:
        return self.valid_from is None and self.valid_until is None

    def relation(self, now: datetime) -> Relation:
        now = require_utc(now, "now")
        if self.is_undated:
            return Relation.UNDATED
        if self.valid_from is not None and now < self.valid_from:
            return Relation.FUTURE
        if self.valid_until is not None and now >= self.valid_until:
            return Relation.EXPIRED
        return Relation.CURRENT

    def contains(self, instant: datetime) -> bool:
        return self.relation(instant) is Relation.CURRENT

    def overlaps(self, other: Interval) -> bool:
        """Whether the two share an instant; an unknown bound is open. An undated interval
        says nothing about when, so it overlaps nothing."""
        if self.is_undated or other.is_undated:
            return False
        starts_before_other_ends = (
            self.valid_from is None
            or other.valid_until is None
            or self.valid_from < other.valid_until
        )
        other_starts_before_end = (
            self.valid_until is None
            or other.valid_from is None
            or other.valid_from < self.valid_until
        )
        return starts_before_other_ends and other_starts_before_end


def _check_confidence(
    instance: TemporalMetadata, attribute: attrs.Attribute, value: object
) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or math.isnan(value)
        or not 0.0 <= value <= 1.0
    ):
        raise TemporalError("temporal.confidence", "must be a number in [0, 1]")


@attrs.frozen(kw_only=True)
class TemporalMetadata:
    """Everything R-TIME-1/2 stores about when a claim holds.

    Atemporal metadata carries nothing else; any other kind must state its precision, zone
    and temporal confidence (independent of the claim's factual confidence, R-DOM-2).
    """

    kind: TemporalKind = attrs.field(
        default=TemporalKind.ATEMPORAL, converter=_closed_enum(TemporalKind, "temporal.kind")
    )
    interval: Interval = attrs.field(factory=Interval)
    precision: Precision | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(_closed_enum(Precision, "temporal.precision")),
    )
    timezone: str | None = attrs.field(default=None)
    confidence: float | None = attrs.field(default=None, validator=_check_confidence)

    def __attrs_post_init__(self) -> None:
        if self.kind is TemporalKind.ATEMPORAL:
            if (
                not self.interval.is_undated
                or self.precision is not None
                or self.timezone is not None
                or self.confidence is not None
            ):
                raise TemporalError("temporal", "atemporal metadata must carry no other field")
            return
        if self.precision is None:
            raise TemporalError("temporal.precision", f"required for {self.kind.value}")
        if self.timezone is None:
            raise TemporalError("temporal.timezone", f"required for {self.kind.value}")
        if self.confidence is None:
            raise TemporalError("temporal.confidence", f"required for {self.kind.value}")
        canonical = canonical_timezone(self.timezone)
        if canonical != self.timezone:
            object.__setattr__(self, "timezone", canonical)

    @property
    def is_atemporal(self) -> bool:
        return self.kind is TemporalKind.ATEMPORAL


ATEMPORAL = TemporalMetadata()
