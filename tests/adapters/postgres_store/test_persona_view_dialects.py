"""The persona view on both SQL dialects (reference §8.6): the newest active and draft
versions, and nothing at all while a clear fences the agent (R-FORGET-3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import PersonaState, PersonaView

A, B = "agent-a", "agent-b"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock):  # type: ignore[no-untyped-def]
    if request.param == "postgres":
        open_claims: Callable[..., object] = request.getfixturevalue("open_claims")
        return open_claims()
    opened = ApswClaimStore(
        tmp_path / "memory.sqlite3", secret_policy=PatternSecretPolicy(), clock=clock
    )
    request.addfinalizer(opened.close)
    return opened


def _contents(view: PersonaView) -> tuple[str | None, str | None]:
    return (
        view.active.content if view.active else None,
        view.draft.content if view.draft else None,
    )


def test_the_view_holds_the_newest_active_and_draft_versions(store, clock: ManualClock) -> None:  # type: ignore[no-untyped-def]
    assert _contents(store.persona(A)) == (None, None)
    first = store.draft_persona(A, "I am a careful assistant.", now=clock.now())
    assert first is not None
    assert _contents(store.persona(A)) == (None, "I am a careful assistant.")
    clock.advance(1.0)
    store.approve_persona(A, first.id, now=clock.now())
    clock.advance(1.0)
    store.draft_persona(A, "I am a careful, brief assistant.", now=clock.now())
    view = store.persona(A)
    assert _contents(view) == ("I am a careful assistant.", "I am a careful, brief assistant.")
    assert view.active is not None and view.active.state is PersonaState.ACTIVE
    assert view.draft is not None and view.draft.state is PersonaState.DRAFT
    assert view.change_ratio is not None and view.change_ratio > 0
    assert _contents(store.persona(B)) == (None, None)  # another agent's rows stay its own


def test_a_clear_fences_the_view(store, clock: ManualClock) -> None:  # type: ignore[no-untyped-def]
    draft = store.draft_persona(A, "I am a careful assistant.", now=clock.now())
    assert draft is not None
    store.approve_persona(A, draft.id, now=clock.now())
    store.draft_persona(B, "I answer in French.", now=clock.now())
    store.begin_clear(A, now=clock.now())
    assert store.persona(A) == PersonaView(
        active=None, draft=None, change_ratio=None, needs_review=False
    )
    assert _contents(store.persona(B)) == (None, "I answer in French.")
