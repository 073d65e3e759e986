"""Whether a prepared draft may be stored: the insert decision (R-WRITE-4, R-WRITE-5).

A repeated provenance key is a duplicate and answered before any tombstone is probed; a
tombstoned identity suppresses the write unless the user adds it explicitly, which
releases exactly those tombstones. A revived row passes the same tombstone rule.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from memory_core.domain.claims import WriteOrigin

__all__ = ["Admission", "admit", "tombstone_verdict"]


class Admission(StrEnum):
    DUPLICATE = "duplicate"  # the key is stored already: return that row, write nothing
    SUPPRESSED = "suppressed"  # a tombstone forbids it and the origin cannot override
    ADMITTED = "admitted"  # nothing in the way
    RELEASED = "released"  # a user's explicit add: release the matching tombstones, then write

    @property
    def writes(self) -> bool:
        return self in (Admission.ADMITTED, Admission.RELEASED)


def tombstone_verdict(*, tombstoned: bool, origin: WriteOrigin) -> Admission:
    """SUPPRESSED, ADMITTED or RELEASED for a draft whose identities are (not) tombstoned."""
    if not tombstoned:
        return Admission.ADMITTED
    if WriteOrigin(origin) is WriteOrigin.USER_ADD:
        return Admission.RELEASED
    return Admission.SUPPRESSED


def admit(*, duplicate: bool, tombstoned: Callable[[], bool], origin: WriteOrigin) -> Admission:
    """The insert decision. `tombstoned` is asked only when the key is new, so a duplicate
    costs the store no tombstone probe."""
    if duplicate:
        return Admission.DUPLICATE
    return tombstone_verdict(tombstoned=tombstoned(), origin=origin)
