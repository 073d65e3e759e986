"""Scope: which part of an owner's memory a claim applies to, and the narrowing filter.

`agent_id` is the storage and security owner; a scope only narrows applicability inside
that owner (R-SCOPE-1). A filter is built from what the caller actually knows: a missing
narrow context never widens what is visible.
"""

from __future__ import annotations

import re
from enum import StrEnum

import attrs

from memory_core.domain.errors import ScopeError, ValidationError

__all__ = [
    "AGENT_ID_PATTERN",
    "MAX_SCOPE_ID_LENGTH",
    "Scope",
    "ScopeContext",
    "ScopeFilter",
    "ScopeKind",
    "validate_agent_id",
]

AGENT_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
MAX_SCOPE_ID_LENGTH = 256


def validate_agent_id(agent_id: object, field: str = "agent_id") -> str:
    """Return `agent_id` if it is a valid owner id, else raise ValidationError naming `field`.

    The pattern keeps ids safe as file names (`<agentId>.v2.duckdb`) and in SQL.
    """
    if not isinstance(agent_id, str) or not AGENT_ID_PATTERN.fullmatch(agent_id):
        raise ValidationError(field, "must match [A-Za-z0-9_-]{1,128}")
    return agent_id


class ScopeKind(StrEnum):
    AGENT = "agent"
    USER = "user"
    PROJECT = "project"
    SESSION = "session"


def _scope_kind(value: object) -> ScopeKind:
    # A bare ValueError would neither be typed nor name the field (R-DOM-4), and would echo
    # the value, which may come from model output.
    try:
        return ScopeKind(value)
    except ValueError as exc:
        raise ScopeError("scope.kind", "not a known ScopeKind") from exc


def _check_scope_id(instance: Scope, attribute: attrs.Attribute, value: str | None) -> None:
    if instance.kind is ScopeKind.AGENT:
        if value is not None:
            raise ScopeError("scope.scope_id", "must be empty for agent scope")
        return
    if not isinstance(value, str) or not value:
        raise ScopeError("scope.scope_id", f"required for {instance.kind.value} scope")
    if value != value.strip():
        raise ScopeError("scope.scope_id", "must not have leading or trailing whitespace")
    if len(value) > MAX_SCOPE_ID_LENGTH:
        raise ScopeError("scope.scope_id", f"longer than {MAX_SCOPE_ID_LENGTH} characters")


@attrs.frozen(kw_only=True)
class Scope:
    """A (kind, id) pair. Agent scope has no id; every narrower scope has exactly one."""

    kind: ScopeKind = attrs.field(converter=_scope_kind)
    scope_id: str | None = attrs.field(default=None, validator=_check_scope_id)

    @classmethod
    def agent(cls) -> Scope:
        return cls(kind=ScopeKind.AGENT)

    @classmethod
    def user(cls, user_id: str) -> Scope:
        return cls(kind=ScopeKind.USER, scope_id=user_id)

    @classmethod
    def project(cls, project_id: str) -> Scope:
        return cls(kind=ScopeKind.PROJECT, scope_id=project_id)

    @classmethod
    def session(cls, session_id: str) -> Scope:
        return cls(kind=ScopeKind.SESSION, scope_id=session_id)

    @property
    def is_agent(self) -> bool:
        return self.kind is ScopeKind.AGENT

    @property
    def legacy_user_shadow(self) -> str | None:
        """The legacy `user_scope` column value: the id for User scope, else None (R-SCOPE-2)."""
        return self.scope_id if self.kind is ScopeKind.USER else None

    def __str__(self) -> str:
        return self.kind.value if self.scope_id is None else f"{self.kind.value}:{self.scope_id}"


@attrs.frozen(kw_only=True)
class ScopeContext:
    """What the caller knows about the current turn: the session, and the user and the
    project it serves (R-SCOPE-1). Every field is optional; a missing one never widens."""

    session_id: str | None = None
    user_id: str | None = None
    project_id: str | None = None

    def write_scope(self) -> Scope:
        """Where a fact the model saves in this context belongs: the user's scope when the
        user is known (the privacy boundary of a multi-user host), else the project's,
        else the agent's. Never the session's: a saved fact is meant to outlive the chat."""
        if self.user_id and self.user_id.strip():
            return Scope.user(self.user_id.strip())
        if self.project_id and self.project_id.strip():
            return Scope.project(self.project_id.strip())
        return Scope.agent()


@attrs.frozen(kw_only=True)
class ScopeFilter:
    """The set of scopes a read may see: Agent scope plus narrow scopes named by the context."""

    scopes: tuple[Scope, ...]

    @classmethod
    def from_context(cls, context: ScopeContext | None) -> ScopeFilter:
        """Agent scope, plus each narrow scope whose id the context supplies (R-SCOPE-1).

        A blank id counts as missing: it can never match a stored scope and must not widen.
        """
        scopes: list[Scope] = [Scope.agent()]
        if context is not None:
            for kind, value in (
                (ScopeKind.USER, context.user_id),
                (ScopeKind.PROJECT, context.project_id),
                (ScopeKind.SESSION, context.session_id),
            ):
                if value is not None and value.strip():
                    scopes.append(Scope(kind=kind, scope_id=value.strip()))
        return cls(scopes=tuple(scopes))

    @classmethod
    def agent_only(cls) -> ScopeFilter:
        return cls(scopes=(Scope.agent(),))

    def admits(self, scope: Scope) -> bool:
        return scope in self.scopes
