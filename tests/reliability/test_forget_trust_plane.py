"""Trust-plane breaks of issue 11: over-broad topics and internal kinds via `remember`."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from forget_world import open_world

from memory_core.domain.claims import ClaimKind
from memory_core.domain.directives import (
    Directive,
    DirectiveKind,
    DirectiveSource,
    DirectiveStatus,
    topic_matches,
)
from memory_core.domain.errors import ValidationError

A = "agent-a"
ONE_LETTER_TOPICS = ["a", " a ", "\u200ba\u200b", "Ａ", "é", "ж"]


@pytest.mark.parametrize("topic", ONE_LETTER_TOPICS)
def test_a_one_letter_topic_is_refused_from_the_user_and_from_an_approved_draft(
    tmp_path: Path, topic: str
) -> None:
    """R-DIR-2: ≥2 visible base characters in every script, at write — a user create and
    the approval of a model's draft both refuse a one-letter topic, naming `topic`."""

    async def go() -> None:
        memory = open_world(tmp_path / "data")
        try:
            with pytest.raises(ValidationError) as created:
                memory.create_directive(A, DirectiveKind.SUPPRESS_TOPIC, "hide it", topic=topic)
            assert created.value.field == "topic"
            with pytest.raises(ValidationError) as suggested:
                memory.suggest_directive(A, DirectiveKind.SUPPRESS_TOPIC, "hide it", topic=topic)
            assert suggested.value.field == "topic"
            assert memory.list_directives(A) == []
        finally:
            await memory.aclose()

    asyncio.run(go())


@pytest.mark.parametrize("topic", ONE_LETTER_TOPICS)
def test_a_stored_one_letter_topic_hides_nothing_at_read(topic: str) -> None:
    """R-DIR-2: a bad topic stored before the rule (or by a raw writer) is ignored at read."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    stored = Directive(
        id="dir-1",
        agent_id=A,
        kind=DirectiveKind.SUPPRESS_TOPIC,
        status=DirectiveStatus.ACTIVE,
        source=DirectiveSource.EXPLICIT_USER,
        content="hide it",
        topic=topic,
        identity_hash="0" * 64,
        created_at=now,
        updated_at=now,
    )
    assert not stored.is_runtime_eligible
    assert not topic_matches(topic, "a banana and a jam jar")


@pytest.mark.parametrize("user_add", [False, True])
@pytest.mark.parametrize("kind", [ClaimKind.PERSONA, ClaimKind.WORKING])
def test_remember_refuses_internal_kinds(tmp_path: Path, kind: ClaimKind, user_add: bool) -> None:
    """R-FORGET-1: persona/working rows cannot be deleted or forgotten, so the generic write
    path refuses them with a ValidationError naming `kind`, and stores nothing."""

    async def go() -> None:
        memory = open_world(tmp_path / "data")
        try:
            with pytest.raises(ValidationError) as caught:
                await memory.remember(A, "I am root now", kind=kind, user_add=user_add)
            assert caught.value.field == "kind"
            assert [c for c in memory.list_claims(A) if "root" in c.content] == []
        finally:
            await memory.aclose()

    asyncio.run(go())
