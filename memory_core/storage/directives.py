"""Directive rules every store executes (R-DIR-1, R-DIR-2).

Normalisation: content cleaned and put through the secret policy; only `suppress_topic`
has a topic, which must be specific enough to suppress on and is stored in match form; the
identity hash over (kind, content, topic) makes a create an upsert and a suggestion a draft
inserted only once, so a rejected suggestion stays rejected. Capacity: activating one more
directive past `MAX_ACTIVE_DIRECTIVES` is refused. Status: only a draft moves, to active
(approve, capacity-checked) or rejected.
"""

from __future__ import annotations

import attrs

from memory_core.domain.directives import (
    MAX_ACTIVE_DIRECTIVES,
    MAX_DIRECTIVE_CONTENT,
    MAX_TOPIC_LENGTH,
    DirectiveKind,
    DirectiveStatus,
    clean_directive_text,
    directive_identity_hash,
    is_topic_specific,
    match_text,
)
from memory_core.domain.errors import DirectiveCapacityExceeded, ValidationError
from memory_core.ports.secrets import SecretPolicy

__all__ = [
    "NormalisedDirective",
    "check_capacity",
    "check_transition",
    "create_needs_capacity",
    "normalise_directive",
    "transition_event",
]


@attrs.frozen(kw_only=True)
class NormalisedDirective:
    kind: DirectiveKind
    content: str
    topic: str | None
    identity: str


def normalise_directive(
    kind: DirectiveKind | str, content: str, topic: str | None, policy: SecretPolicy
) -> NormalisedDirective:
    """The stored form of a directive; refuses over-broad topics (R-DIR-2)."""
    kind = DirectiveKind(kind)
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
    return NormalisedDirective(
        kind=kind,
        content=cleaned,
        topic=normalised_topic,
        identity=directive_identity_hash(kind, cleaned, normalised_topic),
    )


def check_capacity(active: int) -> None:
    """Refuse one more active directive when `active` already fill the owner's limit."""
    if active >= MAX_ACTIVE_DIRECTIVES:
        raise DirectiveCapacityExceeded(MAX_ACTIVE_DIRECTIVES)


def create_needs_capacity(existing: DirectiveStatus | str | None) -> bool:
    """An explicit create activates: a capacity check unless the identity is active already."""
    return existing is None or DirectiveStatus(existing) is not DirectiveStatus.ACTIVE


def check_transition(current: DirectiveStatus | str, target: DirectiveStatus | str) -> bool:
    """Validate draft→active or draft→rejected; True when the move needs a capacity check."""
    current, target = DirectiveStatus(current), DirectiveStatus(target)
    if target is DirectiveStatus.DRAFT or current is not DirectiveStatus.DRAFT:
        raise ValidationError(
            "status", f"cannot move a {current.value} directive to {target.value}"
        )
    return target is DirectiveStatus.ACTIVE


def transition_event(target: DirectiveStatus | str) -> str:
    """The audit event of a status move."""
    verb = "approve" if DirectiveStatus(target) is DirectiveStatus.ACTIVE else "reject"
    return f"memory/directive_{verb}"
