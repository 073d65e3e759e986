"""Claim search: the read path's lexical candidates, their authoritative re-validation and
the access accounting of what entered a prompt (R-READ-3, R-READ-7, R-READ-8)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs

from memory_core.domain.claims import Claim, EmbeddingIdentity
from memory_core.domain.scope import ScopeFilter

__all__ = [
    "ClaimSearch",
    "FtsHit",
    "MatchMode",
]


class MatchMode(StrEnum):
    ANY = "any"  # OR of terms (recall)
    ALL = "all"  # AND of terms (management search)


@attrs.frozen(kw_only=True)
class FtsHit:
    claim_id: str
    # bm25: lower is better; hits come ordered best first, equal ranks by importance DESC,
    # created_at DESC, id. Hits of the short-term (<3 code points) fallback carry 0.0 and
    # follow every lexical hit.
    rank: float
    # The hit's authoritative row when the store read it in the search's own statement,
    # under the predicates re-validation applies (owner, recallable, unfenced, scope):
    # retrieval then re-validates only the hits without one (R-READ-3). None: not read.
    # Neither compared nor shown: a hit is its id and rank, and a repr never quotes content.
    claim: Claim | None = attrs.field(default=None, eq=False, repr=False)


@runtime_checkable
class ClaimSearch(Protocol):
    """What retrieval asks of the store on every turn."""

    def search_fts(
        self,
        agent_id: str,
        terms: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        limit: int,
        match_mode: MatchMode = MatchMode.ANY,
    ) -> Sequence[FtsHit]:
        """Recallable rows of this owner and scope matching the terms, best first. The owner
        and scope predicates apply before LIMIT (R-READ-3). Raises StoreError only for
        storage faults; an empty or unmatched query returns []."""
        ...

    def list_applicable_by_ids(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        embedding: EmbeddingIdentity | None = None,
        revisions: Mapping[str, int] | None = None,
    ) -> Sequence[Claim]:
        """Authoritative re-validation (R-READ-3): the subset of ids that are this owner's,
        in scope, recallable, not fenced by a clear, — when `embedding` is given — ready with
        that identity, and — when `revisions` names an id — still at that revision (a vector
        embedded from an older text is not evidence for the new one). Unknown ids are
        dropped silently. Order follows `claim_ids`, duplicates removed."""
        ...

    def record_access(self, agent_id: str, claim_ids: Sequence[str], *, now: datetime) -> int:
        """Bump access counters of the owner's recallable rows (each id once; no revision
        change); returns how many rows changed. A no-op (0) under a clear job."""
        ...
