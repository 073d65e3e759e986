"""Directives: the trust plane (R-DIR-1..3). Independent of claims — a clear leaves them,
and a store may keep them elsewhere — so a store can implement this role alone."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus

# Re-exported: the error lives in the domain's hierarchy; old imports keep working.
from memory_core.domain.errors import DirectiveCapacityExceeded

__all__ = [
    "DirectiveCapacityExceeded",
    "DirectiveReader",
    "DirectiveStore",
]


@runtime_checkable
class DirectiveReader(Protocol):
    """The active set a turn reads (retrieval, the session runtime)."""

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        """Ordered updated_at DESC, id ASC (R-DIR-3). Directives survive a clear and are
        readable while one is pending."""
        ...


@runtime_checkable
class DirectiveStore(DirectiveReader, Protocol):
    """Directive writes: explicit create, derived suggestion, approve/reject."""

    def create_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive:
        """Explicit user create: active at once; upserts by identity (an existing row of the
        same identity is updated and re-activated, whatever its status). Raises
        DirectiveCapacityExceeded when 64 are already active, ValidationError('topic', …)
        for a missing, stray or over-broad topic (R-DIR-2). Content and topic pass the
        secret policy."""
        ...

    def suggest_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive | None:
        """Derived suggestion: a draft, inserted only if its identity is absent (a rejected
        suggestion stays rejected). Returns None when it already existed."""
        ...

    def set_directive_status(
        self, agent_id: str, directive_id: str, status: DirectiveStatus, *, now: datetime
    ) -> Directive:
        """Approve (draft→active, capacity-checked) or reject (draft→rejected); any other
        transition raises ValidationError('status', …). NotFound for unknown/foreign ids."""
        ...
