"""The directive table of `InMemoryClaimStore`: the trust plane (R-DIR-1..3).

Only an explicit create or an approve makes a directive active; suggestions are drafts
inserted only if their identity is new, so a rejected suggestion stays rejected however
often it is suggested again. Each operation validates everything before its single write,
so a refused call leaves the table as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs

from memory_core.domain.directives import (
    MAX_ACTIVE_DIRECTIVES,
    MAX_DIRECTIVE_CONTENT,
    MAX_TOPIC_LENGTH,
    Directive,
    DirectiveKind,
    DirectiveSource,
    DirectiveStatus,
    clean_directive_text,
    directive_identity_hash,
    is_topic_specific,
    match_text,
)
from memory_core.domain.errors import DirectiveCapacityExceeded, NotFound, ValidationError
from memory_core.ports.secrets import SecretPolicy

__all__ = ["DirectiveTable"]


def _normalise(
    kind: DirectiveKind, content: str, topic: str | None, policy: SecretPolicy
) -> tuple[str, str | None, str]:
    """(content, normalised topic, identity hash); refuses over-broad topics (R-DIR-2)."""
    cleaned = clean_directive_text(content, field="content", limit=MAX_DIRECTIVE_CONTENT)
    cleaned = policy.check_write(cleaned, field="content")
    normalised_topic: str | None = None
    if kind is DirectiveKind.SUPPRESS_TOPIC:
        if topic is None:
            raise ValidationError("topic", "required for suppress_topic")
        raw = clean_directive_text(topic, field="topic", limit=MAX_TOPIC_LENGTH)
        raw = policy.check_write(raw, field="topic")
        if not is_topic_specific(raw):
            raise ValidationError("topic", "too broad to suppress on")
        normalised_topic = match_text(raw)
        if len(normalised_topic) > MAX_TOPIC_LENGTH:  # NFKC can lengthen text
            raise ValidationError("topic", f"longer than {MAX_TOPIC_LENGTH} code points")
    elif topic is not None:
        raise ValidationError("topic", "only suppress_topic directives have a topic")
    return cleaned, normalised_topic, directive_identity_hash(kind, cleaned, normalised_topic)


class DirectiveTable:
    """Directives per owner, unique by (kind, identity hash) within the owner."""

    def __init__(self, *, policy: SecretPolicy, new_id: Callable[[], str]) -> None:
        self._policy = policy
        self._new_id = new_id
        self._rows: dict[str, dict[str, Directive]] = {}  # agent → id → directive

    def _by_identity(self, agent_id: str, kind: DirectiveKind, identity: str) -> Directive | None:
        for directive in self._rows.get(agent_id, {}).values():
            if directive.kind is kind and directive.identity_hash == identity:
                return directive
        return None

    def _ensure_capacity(self, agent_id: str) -> None:
        active = sum(
            d.status is DirectiveStatus.ACTIVE for d in self._rows.get(agent_id, {}).values()
        )
        if active >= MAX_ACTIVE_DIRECTIVES:
            raise DirectiveCapacityExceeded(MAX_ACTIVE_DIRECTIVES)

    def _store(self, directive: Directive) -> Directive:
        self._rows.setdefault(directive.agent_id, {})[directive.id] = directive
        return directive

    def create(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None,
        now: datetime,
    ) -> Directive:
        """Explicit user create: upsert by identity, active at once (R-DIR-1)."""
        kind = DirectiveKind(kind)
        cleaned, normalised_topic, identity = _normalise(kind, content, topic, self._policy)
        existing = self._by_identity(agent_id, kind, identity)
        if existing is None or existing.status is not DirectiveStatus.ACTIVE:
            self._ensure_capacity(agent_id)
        if existing is not None:
            return self._store(
                attrs.evolve(
                    existing,
                    status=DirectiveStatus.ACTIVE,
                    source=DirectiveSource.EXPLICIT_USER,
                    content=cleaned,
                    topic=normalised_topic,
                    updated_at=max(existing.created_at, now),
                )
            )
        return self._store(
            Directive(
                id=self._new_id(),
                agent_id=agent_id,
                kind=kind,
                status=DirectiveStatus.ACTIVE,
                source=DirectiveSource.EXPLICIT_USER,
                content=cleaned,
                topic=normalised_topic,
                identity_hash=identity,
                created_at=now,
                updated_at=now,
            )
        )

    def suggest(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None,
        now: datetime,
    ) -> Directive | None:
        """A derived draft, inserted only if absent; None when the identity already exists."""
        kind = DirectiveKind(kind)
        cleaned, normalised_topic, identity = _normalise(kind, content, topic, self._policy)
        if self._by_identity(agent_id, kind, identity) is not None:
            return None
        return self._store(
            Directive(
                id=self._new_id(),
                agent_id=agent_id,
                kind=kind,
                status=DirectiveStatus.DRAFT,
                source=DirectiveSource.DERIVED_SUGGESTION,
                content=cleaned,
                topic=normalised_topic,
                identity_hash=identity,
                created_at=now,
                updated_at=now,
            )
        )

    def set_status(
        self, agent_id: str, directive_id: str, status: DirectiveStatus, *, now: datetime
    ) -> Directive:
        """draft→active (approve, capacity-checked) or draft→rejected; nothing else."""
        status = DirectiveStatus(status)
        directive = self._rows.get(agent_id, {}).get(directive_id)
        if directive is None:
            raise NotFound(f"no directive {directive_id} for this agent")
        if status is DirectiveStatus.DRAFT or directive.status is not DirectiveStatus.DRAFT:
            raise ValidationError(
                "status", f"cannot move a {directive.status.value} directive to {status.value}"
            )
        if status is DirectiveStatus.ACTIVE:
            self._ensure_capacity(agent_id)
        return self._store(
            attrs.evolve(directive, status=status, updated_at=max(directive.created_at, now))
        )

    def list_directives(self, agent_id: str, *, status: DirectiveStatus | None) -> list[Directive]:
        """updated_at DESC, id ASC (R-DIR-3)."""
        wanted = None if status is None else DirectiveStatus(status)
        rows = [
            d for d in self._rows.get(agent_id, {}).values() if wanted is None or d.status is wanted
        ]
        rows.sort(key=lambda d: d.id)
        rows.sort(key=lambda d: d.updated_at, reverse=True)  # stable: ids stay ascending
        return rows

    def drop_namespace(self, agent_id: str) -> None:
        self._rows.pop(agent_id, None)
