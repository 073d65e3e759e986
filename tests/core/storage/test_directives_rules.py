"""Directive normalisation and capacity once in the core (R-DIR-1, R-DIR-2)."""

from __future__ import annotations

import pytest
from storage_support import RedactingPolicy

from memory_core.domain.directives import (
    MAX_ACTIVE_DIRECTIVES,
    DirectiveKind,
    DirectiveStatus,
    directive_identity_hash,
    match_text,
)
from memory_core.domain.errors import DirectiveCapacityExceeded, SecretRejected, ValidationError
from memory_core.storage.directives import (
    check_capacity,
    check_transition,
    create_needs_capacity,
    normalise_directive,
    transition_event,
)


def test_a_topic_is_required_specific_and_stored_in_match_form() -> None:
    """R-DIR-2."""
    policy = RedactingPolicy()
    with pytest.raises(ValidationError, match="required"):
        normalise_directive(DirectiveKind.SUPPRESS_TOPIC, "never mention it", None, policy)
    with pytest.raises(ValidationError, match="too broad"):
        normalise_directive(DirectiveKind.SUPPRESS_TOPIC, "never mention it", "猫", policy)
    made = normalise_directive("suppress_topic", "never mention it", "My Ex-Partner", policy)
    assert made.topic == match_text("My Ex-Partner")
    assert made.identity == directive_identity_hash(
        DirectiveKind.SUPPRESS_TOPIC, "never mention it", made.topic
    )


def test_only_suppress_topic_has_a_topic() -> None:
    with pytest.raises(ValidationError) as caught:
        normalise_directive("instruction", "answer in French", "French", RedactingPolicy())
    assert caught.value.field == "topic"


def test_content_passes_the_secret_policy_and_the_identity_follows_it() -> None:
    """R-PRIV-1 on the trust plane: a redacted directive's identity is its redacted form's."""
    made = normalise_directive("instruction", "use key sk-abcdef12", None, RedactingPolicy())
    assert made.content == "use key [REDACTED:key]"
    assert made.identity == directive_identity_hash(
        DirectiveKind.INSTRUCTION, "use key [REDACTED:key]", None
    )
    with pytest.raises(SecretRejected):
        normalise_directive("instruction", "sk-abcdef12", None, RedactingPolicy(reject=True))


def test_capacity_refuses_the_one_past_the_limit() -> None:
    """R-DIR-1."""
    check_capacity(MAX_ACTIVE_DIRECTIVES - 1)
    with pytest.raises(DirectiveCapacityExceeded):
        check_capacity(MAX_ACTIVE_DIRECTIVES)


@pytest.mark.parametrize(
    ("existing", "needs"),
    [(None, True), ("draft", True), ("rejected", True), ("active", False)],
)
def test_a_create_checks_capacity_unless_already_active(existing: str | None, needs: bool) -> None:
    assert create_needs_capacity(existing) is needs


@pytest.mark.parametrize(
    ("current", "target", "needs"),
    [("draft", "active", True), ("draft", "rejected", False)],
)
def test_a_draft_moves_to_active_or_rejected(current: str, target: str, needs: bool) -> None:
    assert check_transition(current, target) is needs


@pytest.mark.parametrize(
    ("current", "target"),
    [("draft", "draft"), ("active", "rejected"), ("rejected", "active"), ("active", "active")],
)
def test_no_other_move_is_allowed(current: str, target: str) -> None:
    with pytest.raises(ValidationError) as caught:
        check_transition(current, target)
    assert caught.value.field == "status"


def test_transition_events_name_the_move() -> None:
    assert transition_event(DirectiveStatus.ACTIVE) == "memory/directive_approve"
    assert transition_event("rejected") == "memory/directive_reject"
