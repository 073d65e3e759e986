"""The identities a stored row leaves as tombstones when it is forgotten (R-FORGET-1).

From raw column values, because delete, clear and repair meet rows a raw writer may have
corrupted: a row whose scope pair is unreadable is tombstoned by its Agent-scope content
identity, which suppresses more, never less.
"""

from __future__ import annotations

from memory_core.domain.claims import Claim
from memory_core.domain.errors import ScopeError
from memory_core.domain.provenance import TombstoneIdentity, tombstone_identities
from memory_core.domain.scope import Scope

__all__ = ["identities_of_claim", "stored_identities"]


def stored_identities(
    agent_id: str,
    *,
    scope_type: object,
    scope_id: object,
    canonical: object,
    provenance: object,
) -> tuple[TombstoneIdentity, ...]:
    """A stored row's identities from its raw columns (never raises on a corrupt row)."""
    try:
        scope = Scope(kind=scope_type, scope_id=scope_id)  # type: ignore[arg-type]
    except (ScopeError, ValueError, TypeError):
        scope = Scope.agent()
    key = provenance if isinstance(provenance, str) else None
    text = canonical if isinstance(canonical, str) else str(canonical)
    return tombstone_identities(agent_id, scope, text, key)


def identities_of_claim(claim: Claim) -> tuple[TombstoneIdentity, ...]:
    return tombstone_identities(
        claim.agent_id, claim.scope, claim.canonical_content, claim.provenance_key
    )
