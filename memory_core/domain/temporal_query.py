"""The periods a query names ("in May 2023", "last week", "on 8 May") and which claims fall in them.

A dated question is rarely answered by a claim that repeats the date: a conversation turn
says "I went to the support group yesterday", and the date lives in when it was said. So a
period named in the query matches a claim by time, not words — by its source time (when it
was recorded: `created_at`) or, for a claim that carries one, by its validity window
overlapping the period (R-TIME-1/3).

Phrases are resolved by `dates.find_time_expressions` against the domain clock's instant and
zone, so "last week" means the caller's last week. A month or weekday without a year is the
nearest one: a question can ask about either side. Only periods with both bounds count: an
open "before July" would match most of a memory and tell nothing apart.
"""

from __future__ import annotations

from datetime import datetime

import attrs

from memory_core.domain.claims import Claim
from memory_core.domain.dates import TimeRole, find_time_expressions
from memory_core.domain.temporal import Interval, TemporalKind

__all__ = ["QueryPeriods", "query_periods"]


@attrs.frozen(kw_only=True)
class QueryPeriods:
    """Half-open UTC periods named in one query; empty when it names none."""

    periods: tuple[Interval, ...] = ()
    # Each period once, first occurrence first: a pasted page names "on Saturday" a dozen
    # times, and every candidate of the turn is matched against the periods (issue 15).
    _distinct: tuple[Interval, ...] = attrs.field(
        init=False,
        eq=False,
        repr=False,
        default=attrs.Factory(lambda self: tuple(dict.fromkeys(self.periods)), takes_self=True),
    )

    def __bool__(self) -> bool:
        return bool(self.periods)

    def matches(self, claim: Claim) -> bool:
        """Whether the claim was recorded in, or holds during, one of the periods."""
        created = claim.created_at
        temporal = claim.temporal
        if temporal.kind is TemporalKind.ATEMPORAL:  # no validity window to overlap
            return any(period.contains(created) for period in self._distinct)
        return any(
            period.contains(created) or temporal.interval.overlaps(period)
            for period in self._distinct
        )


def query_periods(query: str, *, reference: datetime, timezone: str) -> QueryPeriods:
    """The bounded periods `query` names, resolved against `reference` in `timezone`: the
    phrases the resolver reads as a point in time ("in May", "last week"), not "since May"."""
    found = find_time_expressions(query, reference=reference, timezone=timezone, prefer="nearest")
    return QueryPeriods(
        periods=tuple(e.resolved.interval for e in found if e.resolved.role is TimeRole.POINT)
    )
