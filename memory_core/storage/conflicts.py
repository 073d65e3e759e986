"""Conflict rules the stores share (reference §7.8): what a resolution does to the rows of
one challenge, and what removing one of its rows does to the others. Written once here so
the SQL kit and the in-memory fake only execute a `LinkChange`, never decide one.

A removal is any way a row stops being what a challenge refers to, other than resolving it:
a user delete or archive, a supersede or a manual edit that retires it. The rules:

- A challenged *target* removed: its open challengers are **parked** — archived, unlinked,
  not tombstoned. Promoting them would bring a rival fact back live that the user never
  confirmed ("forget that my cat is Miso" must not silently make "my cat is Luna" true);
  deleting or tombstoning them would forget a text the user never asked to forget (R-FORGET-1:
  an independent fact is not suppressed). Parked rows are listed as archived, so the user
  can restore one — which makes it an ordinary claim — and a later extraction of the same
  text is absorbed by it like any archived duplicate.
- A *challenger* removed: its link goes with it, and the target's challenged flag clears
  once no other challenger is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import attrs

from memory_core.ports.claims.maintenance import Resolution

__all__ = [
    "PARKED",
    "LinkChange",
    "Removal",
    "removal_change",
    "resolution_change",
]

# The resolution an audit event names when a removal, not a decision, settled a challenge.
PARKED = "target_removed"


class Removal(StrEnum):
    DELETE = "delete"  # the row is gone
    RETIRE = "retire"  # the row stays, no longer live (archived, superseded)


@attrs.frozen(kw_only=True)
class LinkChange:
    """Row moves of one challenge, in the order a store applies them. Every moved row gets
    revision + 1; unlinking and clearing the flag alone do not change a row's revision."""

    activate: tuple[str, ...] = ()  # challengers that become ordinary live claims
    archive: tuple[tuple[str, str | None], ...] = ()  # (row, superseded_by or None)
    supersede: tuple[tuple[str, str], ...] = ()  # (row, successor): retired, lifecycle kept
    edges: tuple[tuple[str, str], ...] = ()  # supersede lineage (parent, child)
    unlink: tuple[str, ...] = ()  # challengers whose conflict link clears
    clear_flag: str | None = None  # the target whose challenged flag clears

    @property
    def empty(self) -> bool:
        return self == LinkChange()


def resolution_change(
    resolution: Resolution, challenger: str, target: str, challengers: Sequence[str]
) -> tuple[str, LinkChange]:
    """(the id that stands for the fact, the moves) of resolving `challenger` against
    `target`, whose open challengers are `challengers` (this one among them):
    KEEP_TARGET retires the challenger into the target; KEEP_CHALLENGER activates it and
    retires the target and every sibling into it; KEEP_BOTH activates it."""
    siblings = tuple(c for c in challengers if c != challenger)
    flag = None if siblings else target
    if resolution is Resolution.KEEP_TARGET:
        return target, LinkChange(
            archive=((challenger, target),),
            edges=((challenger, target),),
            unlink=(challenger,),
            clear_flag=flag,
        )
    if resolution is Resolution.KEEP_CHALLENGER:
        return challenger, LinkChange(
            activate=(challenger,),
            supersede=((target, challenger),),
            archive=tuple((s, challenger) for s in siblings),
            edges=tuple((loser, challenger) for loser in (target, *siblings)),
            unlink=(challenger, *siblings),
            clear_flag=target,
        )
    return challenger, LinkChange(activate=(challenger,), unlink=(challenger,), clear_flag=flag)


def removal_change(
    removed: str,
    how: Removal,
    *,
    challengers: Sequence[str],
    target: str | None,
    siblings: Sequence[str],
) -> LinkChange:
    """The moves when `removed` leaves: `challengers` are its own open challengers (it is
    a target), `target` the row it challenges (it is a challenger) and `siblings` that
    target's other open challengers. Empty when `removed` takes part in no challenge."""
    if challengers:
        return LinkChange(
            archive=tuple((c, None) for c in challengers),
            unlink=tuple(challengers),
            clear_flag=removed if how is Removal.RETIRE else None,
        )
    if target is not None:
        others = [s for s in siblings if s != removed]
        return LinkChange(unlink=(removed,), clear_flag=None if others else target)
    return LinkChange()
