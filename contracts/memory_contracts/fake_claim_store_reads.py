"""Reads of `InMemoryClaimStore` — listing, lexical search, re-validation, embedding queues —
and its bookkeeping writes (access counters, embedding state), which never bump a revision.

Every read is fenced by a pending clear (R-FORGET-3): it sees no rows at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import attrs

from memory_contracts.fake_claim_store_table import ClaimTable, epoch_ms
from memory_core.domain.claims import Claim, EmbeddingIdentity, EmbeddingState
from memory_core.domain.errors import ScopeError, ValidationError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.ports.claims import FtsHit, MatchMode

__all__ = [
    "MAX_SEARCH_TERMS",
    "find_live_by_slot",
    "list_applicable_by_ids",
    "list_claims",
    "list_pending_embeddings",
    "list_ready_ids",
    "mark_embedding",
    "record_access",
    "reset_embeddings",
    "search",
]

MAX_SEARCH_TERMS = 32  # the apsw store reads at most this many terms, too


def _unique_ids(claim_ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(cid for cid in claim_ids if isinstance(cid, str)))


def _clean_terms(terms: Sequence[str]) -> list[str]:
    # Terms are literal text: nothing is parsed, so quotes and operators never become syntax.
    cleaned = (term.strip().lower() for term in terms if isinstance(term, str))
    return list(dict.fromkeys(term for term in cleaned if term))[:MAX_SEARCH_TERMS]


def search(
    table: ClaimTable,
    agent_id: str,
    terms: Sequence[str],
    *,
    scope_filter: ScopeFilter,
    limit: int,
    match_mode: MatchMode,
) -> list[FtsHit]:
    """Case-insensitive substring match of each term in the canonical content.

    Owner, recallability and scope are filtered before the limit (R-READ-3). Order: more
    matched terms, then importance, then newer, then id — deterministic, like bm25's
    tie-breaks in the apsw store. `rank` is minus the matched-term count, so lower is
    better as with bm25; it is not a bm25 score.
    """
    cleaned = _clean_terms(terms)
    if not cleaned or limit <= 0:
        return []
    need = len(cleaned) if match_mode is MatchMode.ALL else 1
    scored: list[tuple[int, Claim]] = []
    for claim in table.visible(agent_id):
        if not (claim.is_recallable and scope_filter.admits(claim.scope)):
            continue
        text = claim.canonical_content.lower()
        matched = sum(term in text for term in cleaned)
        if matched >= need:
            scored.append((matched, claim))
    scored.sort(key=lambda s: (-s[0], -s[1].importance, -epoch_ms(s[1].created_at), s[1].id))
    return [FtsHit(claim_id=claim.id, rank=-float(matched)) for matched, claim in scored[:limit]]


def find_live_by_slot(table: ClaimTable, agent_id: str, scope: Scope, slot: str) -> Claim | None:
    """The newest recallable holder of `slot` in exactly `scope` (created_at, id DESC)."""
    if not isinstance(scope, Scope):
        raise ScopeError("scope", "must be a Scope")
    if not isinstance(slot, str) or not slot.strip():
        raise ValidationError("slot", "must be a non-empty slot key")
    holders = [
        claim
        for claim in table.visible(agent_id)
        if claim.is_recallable and claim.scope == scope and claim.slot == slot
    ]
    return max(holders, key=lambda c: (c.created_at, c.id), default=None)


def list_claims(
    table: ClaimTable,
    agent_id: str,
    *,
    scope_filter: ScopeFilter | None,
    include_inactive: bool,
    limit: int,
    after_id: str | None,
) -> list[Claim]:
    """Claims (never internal rows), created_at DESC, id DESC, keyset-paged by `after_id`."""
    if limit <= 0:
        return []
    rows = [
        claim
        for claim in table.visible(agent_id)
        if not claim.kind.is_internal
        and (include_inactive or claim.is_recallable)
        and (scope_filter is None or scope_filter.admits(claim.scope))
    ]
    if after_id is not None:
        cursor = table.find(agent_id, after_id)
        if cursor is None:
            return []  # an unknown cursor yields an empty page, as in SQL
        rows = [c for c in rows if (c.created_at, c.id) < (cursor.created_at, cursor.id)]
    rows.sort(key=lambda c: (c.created_at, c.id), reverse=True)
    return rows[:limit]


def list_applicable_by_ids(
    table: ClaimTable,
    agent_id: str,
    claim_ids: Sequence[str],
    *,
    scope_filter: ScopeFilter,
    embedding: EmbeddingIdentity | None,
    revisions: Mapping[str, int] | None,
) -> list[Claim]:
    """Authoritative re-validation (R-READ-3), in the order of `claim_ids`."""
    applicable: list[Claim] = []
    for claim_id in _unique_ids(claim_ids):
        claim = table.find(agent_id, claim_id)
        if claim is None or not claim.is_recallable or not scope_filter.admits(claim.scope):
            continue
        if embedding is not None and not _ready_with(claim, embedding):
            continue
        if revisions and claim_id in revisions and revisions[claim_id] != claim.revision:
            continue
        applicable.append(claim)
    return applicable


def _ready_with(claim: Claim, identity: EmbeddingIdentity) -> bool:
    return claim.embedding_state is EmbeddingState.READY and claim.embedding == identity


def list_pending_embeddings(table: ClaimTable, agent_id: str, *, limit: int) -> list[Claim]:
    """Recallable rows waiting for an embedding, oldest first."""
    if limit <= 0:
        return []
    pending = [
        claim
        for claim in table.visible(agent_id)
        if claim.is_recallable and claim.embedding_state is EmbeddingState.PENDING
    ]
    pending.sort(key=lambda c: (c.created_at, c.id))
    return pending[:limit]


def list_ready_ids(table: ClaimTable, agent_id: str, identity: EmbeddingIdentity) -> list[str]:
    """Ids of the owner's recallable rows embedded READY with exactly `identity`, ascending."""
    return sorted(
        c.id for c in table.visible(agent_id) if c.is_recallable and _ready_with(c, identity)
    )


# --- bookkeeping: no revision change, a silent no-op under a pending clear ------------------
def record_access(
    table: ClaimTable, agent_id: str, claim_ids: Sequence[str], *, now: datetime
) -> int:
    counted = 0
    for claim_id in _unique_ids(claim_ids):
        claim = table.find(agent_id, claim_id)
        if claim is None or not claim.is_recallable:
            continue
        last = claim.last_accessed_at
        table.put(
            attrs.evolve(
                claim,
                access_count=claim.access_count + 1,
                last_accessed_at=now if last is None else max(last, now),
            )
        )
        counted += 1
    return counted


def mark_embedding(
    table: ClaimTable,
    agent_id: str,
    claim_id: str,
    *,
    expected_revision: int,
    identity: EmbeddingIdentity | None,
    ready: bool,
) -> bool:
    """CAS on the revision. Archived and superseded rows may be marked (the apsw store's
    UPDATE only excludes internal kinds), so a late completion is never an error."""
    if ready and identity is None:
        raise ValidationError("identity", "required to mark an embedding ready")
    if ready:
        state = EmbeddingState.READY
    else:
        state = EmbeddingState.ERROR if identity is not None else EmbeddingState.FTS_ONLY
    claim = table.find(agent_id, claim_id)
    if claim is None or claim.kind.is_internal or claim.revision != expected_revision:
        return False
    table.put(attrs.evolve(claim, embedding_state=state, embedding=identity))
    return True


def reset_embeddings(table: ClaimTable, agent_id: str, claim_ids: Sequence[str] | None) -> int:
    """Back to PENDING with no identity, revision untouched; returns how many rows changed
    (rows already pending with no identity are not counted, so a repeat returns 0)."""
    if claim_ids is None:
        targets = table.visible(agent_id)
    else:
        found = (table.find(agent_id, claim_id) for claim_id in _unique_ids(claim_ids))
        targets = [claim for claim in found if claim is not None]
    changed = 0
    for claim in targets:
        if not claim.is_recallable:
            continue
        if claim.embedding_state is EmbeddingState.PENDING and claim.embedding is None:
            continue
        table.put(attrs.evolve(claim, embedding_state=EmbeddingState.PENDING, embedding=None))
        changed += 1
    return changed
