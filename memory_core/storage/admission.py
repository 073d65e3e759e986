"""Whether a prepared draft may be stored: the insert decision (R-WRITE-4, R-WRITE-5).

A repeated provenance key is a duplicate and answered before any tombstone is probed; a
tombstoned identity suppresses the write unless the user adds it explicitly, which
releases exactly those tombstones. A revived row passes the same tombstone rule.

The folded identity (same reading, any scope) is probed for `remember` only: the model's
tool must not re-save what the user forgot by changing case or scope, and the user's
explicit add releases it. Extraction and import probe the exact identities: a fact the user
states again in conversation is new evidence, not a replay (R-FORGET-1: similar but
independent facts are not suppressed).

Persona and working rows are projections (R-MAINT-3): nothing deletes, archives or
tombstones them, so the generic write path — `remember`, by the model or the user — may not
create one, or it could never be forgotten.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from memory_core.domain.claims import ClaimKind, WriteOrigin
from memory_core.domain.errors import ValidationError
from memory_core.domain.provenance import TombstoneIdentity

__all__ = ["Admission", "admit", "probed_identities", "require_generic_kind", "tombstone_verdict"]

# The origins of `remember`: the model's tool and the user's explicit add.
_GENERIC_ORIGINS = frozenset({WriteOrigin.MODEL_TOOL, WriteOrigin.USER_ADD})


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


def require_generic_kind(kind: ClaimKind | str, origin: WriteOrigin | str) -> None:
    """Refuse a persona/working row from the generic write path (ValidationError on `kind`)."""
    if WriteOrigin(origin) in _GENERIC_ORIGINS and ClaimKind(kind).is_internal:
        raise ValidationError(
            "kind", f"{ClaimKind(kind).value} rows are projections, not remembered facts"
        )


def probed_identities(
    identities: tuple[TombstoneIdentity, ...], origin: WriteOrigin | str
) -> tuple[TombstoneIdentity, ...]:
    """The identities a write of this origin is checked against (and a user add releases)."""
    if WriteOrigin(origin) in _GENERIC_ORIGINS:
        return identities
    return tuple(identity for identity in identities if not identity.folded)
