"""The user's view of stored claims: get, list (paged and filtered), update, history.

A management surface, not recall: nothing is ranked, nothing counts as access, and every
scope of the owner is visible unless the caller narrows it (R-SCOPE-1 governs recall; a
user looking at their own memory sees all of it). Reads run through the blocking-call port
under the same deadline as an explicit recall, so a networked store never stalls the loop.
`update` is a manual edit with lineage (R-LINEAGE-1): a new text that is a new fact
supersedes the old row with a `manual_edit` edge; `history` follows those edges, and the
merge, supersede and reflection ones, to the whole derivation of a claim.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from enum import StrEnum
from typing import TypeVar

import attrs

from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.errors import NotFound, ValidationError
from memory_core.domain.scope import Scope, ScopeFilter, validate_agent_id
from memory_core.domain.validation import (
    check_enum,
    check_id,
    check_instance,
    check_int,
    check_text,
)
from memory_core.ports.claims import Derivation
from memory_core.ports.claims.audit import AuditEvent
from memory_core.ports.telemetry import SpanName
from memory_core.services.memory.parts import MemoryParts

__all__ = [
    "MAX_HISTORY_EDGES",
    "MAX_PAGE",
    "ClaimHistory",
    "ClaimPage",
    "ClaimStatus",
    "MemoryRecords",
    "claim_status",
]

T = TypeVar("T")

MAX_PAGE = 500
# Rows one `list` call reads from the store at most while filtering by kind or status: a
# rare kind must not turn one page into a scan of the whole table. A page cut by this bound
# is short but carries a cursor, so the caller pages on.
_SCAN_PAGES = 10
# Edges `history` follows at most: lineage is a small graph per claim, but a store could
# hold a cycle (a repair's self-edge) or a long merge chain.
MAX_HISTORY_EDGES = 1_000


class ClaimStatus(StrEnum):
    """Where a claim stands, in one word (the vocabulary `doctor` counts in)."""

    ACTIVE = "active"  # recallable
    SUPERSEDED = "superseded"  # replaced by a successor (lineage says which)
    ARCHIVED = "archived"  # forgotten recoverably (R-FORGET-2)
    CONFLICTED = "conflicted"  # an unresolved challenger


def claim_status(claim: Claim) -> ClaimStatus:
    if claim.superseded_by is not None:
        return ClaimStatus.SUPERSEDED
    return ClaimStatus(claim.lifecycle.value)


@attrs.frozen(kw_only=True)
class ClaimPage:
    """One page of a listing, newest first. `next_after` continues it (None: the end)."""

    claims: tuple[Claim, ...]
    next_after: str | None = None


@attrs.frozen(kw_only=True)
class ClaimHistory:
    """A claim's derivation: every edge reachable from it, oldest first. `claim` is None
    when the claim itself was deleted; its edges outlive it (lineage has no foreign keys)."""

    claim_id: str
    claim: Claim | None
    derivations: tuple[Derivation, ...]
    # What the audit trail recorded about the claim and the claims its edges reach (adds,
    # edits, archives, deletes), oldest first.
    audit: tuple[AuditEvent, ...] = ()
    truncated: bool = False  # more than MAX_HISTORY_EDGES edges were reachable


class MemoryRecords(MemoryParts):
    async def get(self, agent_id: str, claim_id: str) -> Claim:
        """One claim in any lifecycle; NotFound for an unknown or another owner's id."""
        validate_agent_id(agent_id)
        claim_id = check_id(claim_id, "claim_id")
        return await self._read(lambda: self.store.get(agent_id, claim_id))

    async def list(
        self,
        agent_id: str,
        *,
        kinds: Collection[ClaimKind | str] | None = None,
        statuses: Collection[ClaimStatus | str] | None = None,
        scope: Scope | ScopeFilter | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> ClaimPage:
        """A page of the owner's claims, newest first. `kinds` and `statuses` narrow it
        (default: every kind, active only); `scope` is one exact scope or a filter of
        several (default: every scope); `after` is the previous page's `next_after`."""
        validate_agent_id(agent_id)
        wanted_kinds = _members(kinds, ClaimKind, "kinds")
        wanted = _members(statuses, ClaimStatus, "statuses") or frozenset({ClaimStatus.ACTIVE})
        scope_filter = _scope_filter(scope)
        limit = check_int(limit, "limit", minimum=1, maximum=MAX_PAGE)
        cursor = None if after is None else check_id(after, "after")
        include_inactive = wanted != {ClaimStatus.ACTIVE}
        found: list[Claim] = []
        for _ in range(_SCAN_PAGES):
            rows = await self._read(
                lambda cursor=cursor: self.store.list_claims(
                    agent_id,
                    scope_filter=scope_filter,
                    include_inactive=include_inactive,
                    limit=limit,
                    after_id=cursor,
                )
            )
            for claim in rows:
                cursor = claim.id
                if claim_status(claim) in wanted and (
                    not wanted_kinds or claim.kind in wanted_kinds
                ):
                    found.append(claim)
                    if len(found) == limit:
                        return ClaimPage(claims=tuple(found), next_after=claim.id)
            if len(rows) < limit:
                return ClaimPage(claims=tuple(found))
        return ClaimPage(claims=tuple(found), next_after=cursor)

    async def update(
        self,
        agent_id: str,
        claim_id: str,
        content: str,
        *,
        expected_revision: int | None = None,
    ) -> Claim:
        """The user's manual edit (R-LINEAGE-1). The same fact re-worded in place keeps its
        id (revision+1); a different fact becomes a new claim that supersedes this one with
        a `manual_edit` edge, and the user's text is re-authorised like an explicit add.
        `expected_revision` is the revision the user saw (RevisionConflict when the claim
        changed since); None edits whatever is current. The result is embedded anew."""
        validate_agent_id(agent_id)
        claim_id = check_id(claim_id, "claim_id")
        content = check_text(content, "content")
        if expected_revision is not None:
            check_int(expected_revision, "expected_revision", minimum=1)
        record = {"gen_ai.memory.record.id": claim_id}
        with self._operation(SpanName.UPDATE, "update_memory", agent_id, record) as span:
            async with self._coordinator.exclusive(agent_id):
                revision = (
                    self.store.get(agent_id, claim_id).revision
                    if expected_revision is None
                    else expected_revision
                )
                edited = self.store.update_content(
                    agent_id,
                    claim_id,
                    expected_revision=revision,
                    content=content,
                    now=self._clock.now(),
                )
            if edited.id != claim_id:
                # The old row is retired: its vector would only be an orphan until the next
                # warm-up, so it goes now, as on forget.
                await self.index.forget(
                    agent_id,
                    [claim_id],
                    deadline=self._deadline(self.settings.vector_clear_seconds),
                    cancel=CancellationToken(),
                )
            span.set({"agent_memory.superseded": edited.id != claim_id})
        self._schedule_embedding(agent_id)
        return edited

    async def history(self, agent_id: str, claim_id: str) -> ClaimHistory:
        """Every lineage edge reachable from the claim (supersede, manual edit, merge,
        reflection), oldest first, and the audit events of the claims they reach. NotFound
        when the claim neither exists nor has edges."""
        validate_agent_id(agent_id)
        claim_id = check_id(claim_id, "claim_id")
        try:
            claim: Claim | None = await self._read(lambda: self.store.get(agent_id, claim_id))
        except NotFound:
            claim = None
        edges: dict[tuple[str, str, str], Derivation] = {}
        seen, frontier, truncated = {claim_id}, [claim_id], False
        while frontier and not truncated:
            current = frontier.pop()
            for edge in await self._read(
                lambda current=current: self.store.list_derivations(agent_id, current)
            ):
                edges.setdefault((edge.parent_id, edge.child_id, edge.kind.value), edge)
                if len(edges) >= MAX_HISTORY_EDGES:
                    truncated = True
                for other in (edge.parent_id, edge.child_id):
                    if other not in seen:
                        seen.add(other)
                        frontier.append(other)
        if claim is None and not edges:
            # Nothing of it remains (or it was never this owner's): the audit trail alone
            # does not make an id known (R-PRIV-2).
            raise NotFound(f"no claim {claim_id} for this agent")
        ordered = sorted(edges.values(), key=lambda e: (e.created_at, e.parent_id, e.child_id))
        ids = sorted(seen)
        newest_first = await self._read(
            lambda: self.store.list_audit(agent_id, memory_ids=ids, limit=MAX_HISTORY_EDGES)
        )
        audit = tuple(reversed(newest_first))
        return ClaimHistory(
            claim_id=claim_id,
            claim=claim,
            derivations=tuple(ordered),
            audit=audit,
            truncated=truncated,
        )

    async def _read(self, call: Callable[[], T]) -> T:
        return await self.retrieval.calls.run(
            call,
            deadline=self._deadline(self.settings.prepare_turn_deadline_ms / 1000),
            cancel=CancellationToken(),
        )


def _members(values: object, enum: type[StrEnum], field: str) -> frozenset:
    if values is None:
        return frozenset()
    if isinstance(values, str) or not isinstance(values, Collection):
        raise ValidationError(field, "must be a collection")
    return frozenset(check_enum(value, enum, field) for value in values)


def _scope_filter(scope: object) -> ScopeFilter | None:
    if scope is None or isinstance(scope, ScopeFilter):
        return scope
    return ScopeFilter(scopes=(check_instance(scope, Scope, "scope"),))
