"""The directive plane (R-DIR-1..3): the user creates, the model suggests, the user decides.

A suggestion is a draft and never active until approved; a rejected suggestion stays
rejected, so the same text suggested again is refused (None).
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.validation import check_enum, check_id, check_text
from memory_core.services.memory.parts import MemoryParts

__all__ = ["MemoryDirectives"]


class MemoryDirectives(MemoryParts):
    def create_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive:
        """An explicit user create: active at once."""
        kind, content, topic = _check_directive(agent_id, kind, content, topic)
        return self.store.create_directive(
            agent_id, kind, content, topic=topic, now=self._clock.now()
        )

    def suggest_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive | None:
        """A model or extraction suggestion: a draft, never active (R-DIR-1)."""
        kind, content, topic = _check_directive(agent_id, kind, content, topic)
        return self.store.suggest_directive(
            agent_id, kind, content, topic=topic, now=self._clock.now()
        )

    def approve_directive(self, agent_id: str, directive_id: str) -> Directive:
        _check_directive_ref(agent_id, directive_id)
        return self.store.set_directive_status(
            agent_id, directive_id, DirectiveStatus.ACTIVE, now=self._clock.now()
        )

    def reject_directive(self, agent_id: str, directive_id: str) -> Directive:
        _check_directive_ref(agent_id, directive_id)
        return self.store.set_directive_status(
            agent_id, directive_id, DirectiveStatus.REJECTED, now=self._clock.now()
        )

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        validate_agent_id(agent_id)
        if status is not None:
            status = check_enum(status, DirectiveStatus, "status")
        return self.store.list_directives(agent_id, status=status)


def _check_directive(
    agent_id: object, kind: object, content: object, topic: object
) -> tuple[DirectiveKind, str, str | None]:
    validate_agent_id(agent_id)
    return (
        check_enum(kind, DirectiveKind, "kind"),
        check_text(content, "content"),
        None if topic is None else check_text(topic, "topic"),
    )


def _check_directive_ref(agent_id: object, directive_id: object) -> None:
    validate_agent_id(agent_id)
    check_id(directive_id, "directive_id")
