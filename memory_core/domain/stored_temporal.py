"""Stored and legacy temporal fields read without ever failing (reference §7.3, last
paragraph; R-TIME-4).

For rows already stored, never for model output (which is strict): bounds may be aware
datetimes, epoch milliseconds or ISO-8601 with a zone, and whatever cannot be read becomes
atemporal or a lower confidence, reported as corrupt so startup repair can archive the claim
instead of promoting it to a permanent fact.
"""

from __future__ import annotations

import contextlib
import math
import re
from datetime import UTC, datetime, timedelta
from datetime import timezone as fixed_offset

from memory_core.domain.errors import TemporalError
from memory_core.domain.temporal import (
    ATEMPORAL,
    Interval,
    Precision,
    TemporalKind,
    TemporalMetadata,
    canonical_timezone,
    require_utc,
)
from memory_core.domain.temporal_policy import MISSING_CONFIDENCE

__all__ = ["lenient_normalise"]

_ISO_WITH_ZONE = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})T(?P<hour>\d{2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{1,3}))?)?"
    r"(?P<zone>Z|(?P<sign>[+-])(?P<off_h>\d{2}):(?P<off_m>\d{2}))",
    re.ASCII,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class _Unparsable(Exception):
    pass


def _parse_bound(value: object) -> datetime | None:
    """An aware datetime, epoch milliseconds or strict ISO-8601 with a zone; else raise."""
    try:
        if value is None:
            return None
        if isinstance(value, datetime):
            return require_utc(value, "bound")
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return _EPOCH + timedelta(milliseconds=int(value))
        if isinstance(value, str) and (match := _ISO_WITH_ZONE.fullmatch(value.strip())):
            return _parse_iso(match.groupdict())
    except (TemporalError, OverflowError, ValueError) as exc:
        raise _Unparsable from exc
    raise _Unparsable


def _parse_iso(g: dict[str, str | None]) -> datetime:
    off_h, off_m = int(g["off_h"] or 0), int(g["off_m"] or 0)
    if off_h > 14 or off_m > 59 or (off_h == 14 and off_m != 0):
        raise ValueError("offset out of range")
    offset = timedelta(hours=off_h, minutes=off_m) * (-1 if g["sign"] == "-" else 1)
    # datetime() itself rejects year 0, 31 April, hour 24, minute 60, ...
    fields = (int(g[name] or 0) for name in ("year", "month", "day", "hour", "minute", "second"))
    micros = int((g["fraction"] or "0").ljust(3, "0")) * 1000
    return datetime(*fields, micros, tzinfo=fixed_offset(offset)).astimezone(UTC)


def _interval_or_none(valid_from: object, valid_until: object) -> Interval | None:
    try:
        return Interval(valid_from=_parse_bound(valid_from), valid_until=_parse_bound(valid_until))
    except (_Unparsable, TemporalError):
        return None


def _zone_or_none(value: object) -> str | None:
    try:
        return canonical_timezone(value)  # type: ignore[arg-type]
    except TemporalError:
        return None


def _lenient_confidence(value: object) -> float:
    number = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and value.strip():
        with contextlib.suppress(ValueError):
            number = float(value)
    return min(1.0, max(0.0, number)) if math.isfinite(number) else MISSING_CONFIDENCE


def lenient_normalise(
    *,
    kind: object,
    valid_from: object = None,
    valid_until: object = None,
    confidence: object = None,
    precision: object = None,
    timezone: object = None,
    fallback_timezone: str = "UTC",
) -> tuple[TemporalMetadata, bool]:
    """Read stored/legacy temporal fields without ever failing; report whether they were corrupt.

    For rows already stored (never for model output, which is strict). Bounds may be aware
    datetimes, epoch milliseconds or ISO-8601 with a zone. Unknown kind, an unparsable bound or
    `from >= until` give atemporal; missing precision gives `unknown`; missing confidence gives
    0.5; an invalid zone falls back to `fallback_timezone` with confidence capped at 0.5.
    `was_corrupt` is True whenever the fields were not valid as stored, so startup repair
    archives the claim instead of promoting it to a permanent fact (R-TIME-4).
    """
    extras = (valid_from, valid_until, confidence, precision, timezone)
    # A legacy row without any temporal field is simply atemporal, not corrupt.
    if kind is None or kind == TemporalKind.ATEMPORAL.value:
        return ATEMPORAL, any(value is not None for value in extras)
    try:
        temporal_kind = TemporalKind(kind)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return ATEMPORAL, True
    interval = _interval_or_none(valid_from, valid_until)
    if interval is None:
        return ATEMPORAL, True
    if not isinstance(confidence, bool) and isinstance(confidence, int | float):
        try:
            strict = TemporalMetadata(
                kind=temporal_kind,
                interval=interval,
                precision=precision,  # type: ignore[arg-type]
                timezone=timezone,  # type: ignore[arg-type]
                confidence=confidence,
            )
            return strict, False
        except TemporalError:
            pass
    try:
        lenient_precision = Precision(precision)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        lenient_precision = Precision.UNKNOWN
    requested = _zone_or_none(timezone)
    lenient_confidence = _lenient_confidence(confidence)
    if requested is None and timezone not in (None, ""):
        # The bounds were resolved in a zone we can no longer trust.
        lenient_confidence = min(lenient_confidence, MISSING_CONFIDENCE)
    metadata = TemporalMetadata(
        kind=temporal_kind,
        interval=interval,
        precision=lenient_precision,
        timezone=requested or _zone_or_none(fallback_timezone) or "UTC",
        confidence=lenient_confidence,
    )
    return metadata, True
