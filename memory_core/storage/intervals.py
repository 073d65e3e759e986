"""Validity intervals on supersede and revive (R-TIME-1, R-LINEAGE-1).

A superseded state stops holding where its successor starts, when that is known and later
than its own start, else when the change was recorded; its interval is closed there, so
evidence retrieval still sees when it was true. A revived row takes the draft's dated
reading, or — undated — a state holds again from now, open-ended, and any other kind keeps
what it had.
"""

from __future__ import annotations

from datetime import datetime

import attrs

from memory_core.domain.temporal import Interval, TemporalKind, TemporalMetadata

__all__ = ["closed_valid_until", "closing_instant", "reopened_temporal"]


def closing_instant(old: TemporalMetadata, successor: TemporalMetadata, now: datetime) -> datetime:
    """When the superseded state ends: the successor's start if later than the old start."""
    start = successor.interval.valid_from
    old_start = old.interval.valid_from
    if start is not None and (old_start is None or start > old_start):
        return start
    return now


def closed_valid_until(old: TemporalMetadata, ends: datetime) -> datetime | None:
    """The superseded row's new `valid_until`: `ends` for a state still holding at `ends`
    (one that started before it); anything else keeps its bound."""
    interval = old.interval
    if (
        old.kind is TemporalKind.STATE
        and (interval.valid_until is None or interval.valid_until > ends)
        and (interval.valid_from is None or interval.valid_from < ends)
    ):
        return ends
    return interval.valid_until


def reopened_temporal(
    stored: TemporalMetadata, incoming: TemporalMetadata, now: datetime
) -> TemporalMetadata:
    """The temporal metadata of a revived row, from what it stored and what the draft says."""
    if not incoming.is_atemporal:
        return incoming
    if stored.kind is TemporalKind.STATE:
        return attrs.evolve(stored, interval=Interval(valid_from=now))
    return stored
