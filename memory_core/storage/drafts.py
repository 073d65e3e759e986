"""Draft preparation: what a store computes from a `ClaimDraft` before it takes a lock.

The secret policy runs first (R-PRIV-1), so the provenance key, the tombstone identities and
the canonical content are all computed over the text actually stored: a redacted claim is
suppressed by the tombstone of its redacted form (R-WRITE-4, R-DOM-3). Bounds are cut to
`STORED_RESOLUTION`, the precision every store keeps, so a claim reads back as it was
written whatever the backend.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs

from memory_core.domain.claims import Claim, ClaimDraft, ClaimKind
from memory_core.domain.errors import ValidationError
from memory_core.domain.provenance import (
    TombstoneIdentity,
    canonical_content,
    provenance_key,
    tombstone_identities,
    working_provenance_key,
)
from memory_core.domain.temporal import Interval, TemporalMetadata, require_utc
from memory_core.ports.secrets import SecretPolicy

__all__ = [
    "STORED_RESOLUTION",
    "PreparedDraft",
    "draft_of",
    "prepare",
    "stored_temporal",
    "stored_time",
]

# SQLite keeps epoch milliseconds; every store keeps at least that, so all keep exactly it
# for validity bounds (and the fakes model it), and a service cannot pass on one and fail
# on another.
STORED_RESOLUTION = timedelta(milliseconds=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def stored_time(
    value: datetime, field: str = "datetime", *, resolution: timedelta = STORED_RESOLUTION
) -> datetime:
    """`value` as a store reads it back: aware UTC, truncated to `resolution` (a store's
    own `now` may keep more than the validity bounds' `STORED_RESOLUTION`)."""
    return _EPOCH + (require_utc(value, field) - _EPOCH) // resolution * resolution


def stored_temporal(temporal: TemporalMetadata) -> TemporalMetadata:
    """`temporal` with its bounds at stored precision (unchanged when undated)."""
    interval = temporal.interval
    if interval.valid_from is None and interval.valid_until is None:
        return temporal
    return attrs.evolve(
        temporal,
        interval=Interval(
            valid_from=None if interval.valid_from is None else stored_time(interval.valid_from),
            valid_until=None if interval.valid_until is None else stored_time(interval.valid_until),
        ),
    )


@attrs.frozen(kw_only=True)
class PreparedDraft:
    """A draft after the secret policy, with everything the write needs computed outside
    the lock: stored text, its canonical form, provenance key, tombstone identities (none
    for internal rows) and the temporal metadata at stored precision."""

    draft: ClaimDraft
    content: str
    canonical: str
    key: str
    identities: tuple[TombstoneIdentity, ...]
    temporal: TemporalMetadata


def prepare(draft: ClaimDraft, policy: SecretPolicy) -> PreparedDraft:
    """Apply the secret policy and compute the scoped provenance key; a text the policy
    empties is refused (ValidationError on `content`), nothing is stored."""
    content = policy.check_write(draft.content, field="content")
    if not content.strip():
        raise ValidationError("content", "nothing left to store after the secret policy")
    agent_id = draft.agent_id
    if draft.kind is ClaimKind.WORKING:
        key = working_provenance_key(agent_id)  # one working row per agent
    else:
        key = provenance_key(agent_id, draft.kind, draft.scope, content)
    identities = (
        () if draft.kind.is_internal else tombstone_identities(agent_id, draft.scope, content, key)
    )
    return PreparedDraft(
        draft=draft,
        content=content,
        canonical=canonical_content(content),
        key=key,
        identities=identities,
        temporal=stored_temporal(draft.temporal),
    )


def draft_of(claim: Claim, *, content: str | None = None) -> ClaimDraft:
    """The draft that would store `claim` again (with `content` instead, for a manual
    edit): the edit is prepared like any write, so its key and tombstones follow the text."""
    return ClaimDraft(
        agent_id=claim.agent_id,
        kind=claim.kind,
        content=claim.content if content is None else content,
        category=claim.category,
        importance=claim.importance,
        confidence=claim.confidence,
        temporal=claim.temporal,
        scope=claim.scope,
        source=claim.source,
        slot=claim.slot,
    )
