"""The directive plane (`MemoryDirectives`)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_plugins.api.loop import SyncLoop

__all__ = ["SyncDirectives"]


class SyncDirectives(SyncLoop):
    def create_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive:
        return self._run_sync(lambda m: m.create_directive(agent_id, kind, content, topic=topic))

    def suggest_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive | None:
        return self._run_sync(lambda m: m.suggest_directive(agent_id, kind, content, topic=topic))

    def approve_directive(self, agent_id: str, directive_id: str) -> Directive:
        return self._run_sync(lambda m: m.approve_directive(agent_id, directive_id))

    def reject_directive(self, agent_id: str, directive_id: str) -> Directive:
        return self._run_sync(lambda m: m.reject_directive(agent_id, directive_id))

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        return self._run_sync(lambda m: m.list_directives(agent_id, status=status))
