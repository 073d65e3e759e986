"""`InMemoryDirectives`: the `DirectiveStore` role alone, in memory, executing the rules of
`memory_core.storage.directives` (R-DIR-1..3); a one-role store, and part of the full fake."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs

from memory_contracts.fake_claim_table import FakeStoreBase
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveSource
from memory_core.domain.directives import DirectiveStatus as Status
from memory_core.domain.errors import NotFound
from memory_core.storage.directives import (
    check_capacity,
    check_transition,
    create_needs_capacity,
    normalise_directive,
)
from memory_core.storage.drafts import stored_time

__all__ = ["InMemoryDirectives"]


class InMemoryDirectives(FakeStoreBase):
    def _of(self, agent_id: str) -> list[Directive]:
        return [d for d in self._open().directives.values() if d.agent_id == agent_id]

    def _keep(self, directive: Directive, **changes: object) -> Directive:
        if changes.get("status") is Status.ACTIVE and create_needs_capacity(directive.status):
            check_capacity(sum(d.status is Status.ACTIVE for d in self._of(directive.agent_id)))
        directive = attrs.evolve(directive, **changes)
        self._open().directives[directive.id] = directive
        return directive

    def _identity(
        self, agent_id: str, kind: DirectiveKind, content: str, topic: str | None, now: datetime
    ) -> tuple[Directive, bool]:
        """The owner's row of this identity (True), or a new derived draft of it (False)."""
        norm = normalise_directive(kind, content, topic, self._policy)
        same = (norm.kind, norm.identity)
        for row in self._of(agent_id):
            if (row.kind, row.identity_hash) == same:
                return attrs.evolve(row, content=norm.content, topic=norm.topic), True
        at = stored_time(now, "now")
        fields = {"content": norm.content, "topic": norm.topic, "identity_hash": norm.identity}
        return Directive(
            id=self._new_id("dir"),
            agent_id=agent_id,
            kind=norm.kind,
            status=Status.DRAFT,
            source=DirectiveSource.DERIVED_SUGGESTION,
            created_at=at,
            updated_at=at,
            **fields,
        ), False

    def create_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive:
        """Explicit user create: upsert by identity (whatever its status), active at once."""
        row, _ = self._identity(agent_id, kind, content, topic, now)
        at = max(row.created_at, stored_time(now, "now"))
        return self._keep(
            row, status=Status.ACTIVE, source=DirectiveSource.EXPLICIT_USER, updated_at=at
        )

    def suggest_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive | None:
        """A derived draft, inserted only if its identity is absent."""
        row, exists = self._identity(agent_id, kind, content, topic, now)
        return None if exists else self._keep(row)

    def set_directive_status(
        self, agent_id: str, directive_id: str, status: Status, *, now: datetime
    ) -> Directive:
        directive = self._open().directives.get(directive_id)
        if directive is None or directive.agent_id != agent_id:
            raise NotFound(f"no directive {directive_id} for this agent")
        check_transition(directive.status, status)  # an approval's capacity: `_keep` checks it
        at = max(directive.created_at, stored_time(now, "now"))
        return self._keep(directive, status=Status(status), updated_at=at)

    def list_directives(
        self, agent_id: str, *, status: Status | None = None
    ) -> Sequence[Directive]:
        """updated_at DESC, id ASC (R-DIR-3); readable while a clear is pending."""
        wanted = [d for d in self._of(agent_id) if status is None or d.status is Status(status)]
        by_id = sorted(wanted, key=lambda d: d.id)
        return sorted(by_id, key=lambda d: d.updated_at, reverse=True)  # stable: ids ascending
