"""`PersonasContract`: the `Personas` role — a draft changes nothing until the user
approves it; approval retires the previous version; a large rewrite is flagged for review
(reference §8.6, R-MAINT-3)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import A, RoleCases, role_fixture
from memory_contracts.fakes import ManualClock
from memory_core.domain.errors import NotFound
from memory_core.ports.claims import ClaimReader, ClaimWriter, Personas, PersonaState

__all__ = ["PersonasContract", "PersonasStore"]

FIRST = "I am a patient assistant who keeps answers short."
SMALL = "I am a patient assistant who keeps answers short and kind."
REWRITE = "Bold explorer of ideas; I argue every point at length with gusto."


@runtime_checkable
class PersonasStore(ClaimReader, ClaimWriter, Personas, Protocol):
    """What the contract calls: its role, and the claim listing persona rows stay out of."""


class PersonasContract(RoleCases):
    """Inherit, implement `make_personas_store`; pytest collects the cases."""

    personas_store = role_fixture("personas_store", "make_personas_store", PersonasStore)

    def test_a_draft_changes_nothing_until_it_is_approved(
        self, personas_store: PersonasStore, clock: ManualClock
    ) -> None:
        """§8.6: the draft is pending, not active; one draft at a time; approval activates
        it; persona rows are never listed as claims."""
        store = personas_store
        draft = store.draft_persona(A, "```\n" + FIRST + "\n```", now=clock.now())
        assert draft is not None and draft.state is PersonaState.DRAFT
        assert draft.content == FIRST  # the code fence is stripped
        view = store.persona(A)
        assert view.active is None and view.draft == draft and not view.needs_review
        assert store.draft_persona(A, SMALL, now=clock.now()) is None
        assert store.list_claims(A, include_inactive=True) == []
        clock.advance(1)
        active = store.approve_persona(A, draft.id, now=clock.now())
        assert active.state is PersonaState.ACTIVE and store.persona(A).active == active
        assert store.draft_persona(A, FIRST, now=clock.now()) is None  # identical: no draft

    def test_approval_retires_the_previous_version_and_a_rewrite_needs_review(
        self, personas_store: PersonasStore, clock: ManualClock
    ) -> None:
        store = personas_store
        first = store.draft_persona(A, FIRST, now=clock.now())
        assert first is not None
        store.approve_persona(A, first.id, now=clock.now())
        clock.advance(1)
        small = store.draft_persona(A, SMALL, now=clock.now())
        assert small is not None
        view = store.persona(A)
        assert view.change_ratio is not None and view.change_ratio < 0.6
        assert not view.needs_review
        store.reject_persona(A, small.id, now=clock.now())
        view = store.persona(A)
        assert view.active is not None and view.active.id == first.id and view.draft is None
        clock.advance(1)
        rewrite = store.draft_persona(A, REWRITE, now=clock.now())
        assert rewrite is not None and store.persona(A).needs_review
        clock.advance(1)
        store.approve_persona(A, rewrite.id, now=clock.now())
        view = store.persona(A)
        assert view.active is not None and view.active.content == REWRITE and view.draft is None
        with pytest.raises(NotFound):
            store.approve_persona(A, first.id, now=clock.now())  # retired, not pending
        with pytest.raises(NotFound):
            store.reject_persona("agent-other", rewrite.id, now=clock.now())

    def test_only_a_rollback_brings_the_previous_version_back(
        self, personas_store: PersonasStore, clock: ManualClock
    ) -> None:
        """§8.6: the user's rollback rejects the active version and makes the newest
        retired one active again; a pending draft is untouched; repeated, it walks further
        back; with nothing earlier it is NotFound and changes nothing."""
        store = personas_store
        versions = []
        for text in (FIRST, SMALL, REWRITE):
            draft = store.draft_persona(A, text, now=clock.now())
            assert draft is not None
            versions.append(store.approve_persona(A, draft.id, now=clock.now()))
            clock.advance(1)
        first, small, rewrite = versions
        pending = store.draft_persona(A, "A quiet, careful helper.", now=clock.now())
        assert pending is not None
        clock.advance(1)
        restored = store.rollback_persona(A, now=clock.now())
        assert (restored.id, restored.state) == (small.id, PersonaState.ACTIVE)
        view = store.persona(A)
        assert view.active == restored and view.draft == pending
        assert store.rollback_persona(A, now=clock.now()).id == first.id
        with pytest.raises(NotFound):
            store.rollback_persona(A, now=clock.now())
        assert store.persona(A).active is not None
        assert store.persona(A).active.id == first.id  # type: ignore[union-attr]
        with pytest.raises(NotFound):
            store.rollback_persona("agent-other", now=clock.now())
        assert rewrite.id not in {store.persona(A).active.id}  # type: ignore[union-attr]
