"""Startup repair decisions (R-TIME-4, R-SCOPE-4): what a row that violates an invariant
becomes. Stores find the rows and execute the decision; a valid row is never altered.

Scope, never widening: Agent rows drop a stray scope id or shadow; User rows resync the
shadow from a valid scope id or recover the id from a valid shadow; Project and Session rows
drop a stray shadow; anything else narrow can only be deleted. Temporal: persona and working
rows become atemporal; any other row's fields are read leniently and the claim archived, so
a broken interval never becomes a permanent atemporal fact.
"""

from __future__ import annotations

import attrs

from memory_core.domain.claims import ClaimKind
from memory_core.domain.scope import MAX_SCOPE_ID_LENGTH, ScopeKind
from memory_core.domain.stored_temporal import lenient_normalise
from memory_core.domain.temporal import ATEMPORAL, TemporalMetadata

__all__ = [
    "ScopeRepair",
    "TemporalRepair",
    "is_internal_kind",
    "scope_repair",
    "temporal_repair",
]


def is_internal_kind(kind: object) -> bool:
    """Whether a raw `kind` column names a persona/working row (unknown kinds are not)."""
    try:
        return ClaimKind(kind).is_internal  # type: ignore[arg-type]
    except ValueError:
        return False


def _valid_scope_id(value: object) -> bool:
    return (
        isinstance(value, str) and 1 <= len(value) <= MAX_SCOPE_ID_LENGTH and value == value.strip()
    )


@attrs.frozen(kw_only=True)
class ScopeRepair:
    """The repaired scope columns of a row."""

    scope_type: str
    scope_id: str | None
    user_scope: str | None


def scope_repair(scope_type: object, scope_id: object, shadow: object) -> ScopeRepair | None:
    """The scope columns that fix a row without widening it, or None: only deletion is safe."""
    if scope_type == ScopeKind.AGENT.value:
        return ScopeRepair(scope_type=ScopeKind.AGENT.value, scope_id=None, user_scope=None)
    if scope_type == ScopeKind.USER.value:
        for candidate in (scope_id, shadow):
            if _valid_scope_id(candidate):
                value = str(candidate)
                return ScopeRepair(
                    scope_type=ScopeKind.USER.value, scope_id=value, user_scope=value
                )
        return None
    if scope_type in (ScopeKind.PROJECT.value, ScopeKind.SESSION.value) and _valid_scope_id(
        scope_id
    ):
        return ScopeRepair(scope_type=str(scope_type), scope_id=str(scope_id), user_scope=None)
    return None


@attrs.frozen(kw_only=True)
class TemporalRepair:
    """The repaired temporal metadata of a row, and whether the claim is archived."""

    temporal: TemporalMetadata
    archive: bool


def temporal_repair(
    *,
    kind: object,
    temporal_kind: object,
    valid_from: object,
    valid_until: object,
    precision: object,
    timezone: object,
    confidence: object,
) -> TemporalRepair:
    """For a row whose temporal fields fail validation. Bounds may be aware datetimes or
    epoch milliseconds, as the store keeps them."""
    if is_internal_kind(kind):
        return TemporalRepair(temporal=ATEMPORAL, archive=False)
    meta, _was_corrupt = lenient_normalise(
        kind=temporal_kind,
        valid_from=valid_from,
        valid_until=valid_until,
        confidence=confidence,
        precision=precision,
        timezone=timezone,
    )
    return TemporalRepair(temporal=meta, archive=True)
