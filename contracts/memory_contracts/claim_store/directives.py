"""`DirectiveStoreContract`: the `DirectiveStore` role, the trust plane — order, suggestions,
the cap, topics, secrets, isolation (R-DIR-1..3, R-PRIV-1, R-PRIV-2). Needs no other role."""

from __future__ import annotations

import pytest

from memory_contracts.claim_store.base import A, B, RoleCases, role_fixture
from memory_contracts.claim_store.support import SECRET_SAMPLE
from memory_contracts.fakes import ManualClock
from memory_core.domain.directives import DirectiveKind, DirectiveSource, DirectiveStatus
from memory_core.domain.errors import (
    DirectiveCapacityExceeded,
    NotFound,
    SecretRejected,
    ValidationError,
)
from memory_core.ports.claims import DirectiveStore

__all__ = ["DirectiveStoreContract"]


class DirectiveStoreContract(RoleCases):
    """Inherit, implement `make_directive_store`; pytest collects the cases."""

    directive_store = role_fixture("directive_store", "make_directive_store", DirectiveStore)

    def test_directives_are_ordered_by_update_time_then_id(
        self, directive_store: DirectiveStore, clock: ManualClock
    ) -> None:
        """R-DIR-3: updated_at DESC, id ASC — also for equal times."""
        first = directive_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "Be brief", now=clock.now()
        )
        second = directive_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "Use metric", now=clock.now()
        )
        clock.advance(5)
        third = directive_store.create_directive(
            A,
            DirectiveKind.SUPPRESS_TOPIC,
            "Never bring up football",
            topic="football",
            now=clock.now(),
        )
        listed = [d.id for d in directive_store.list_directives(A)]
        assert listed == [third.id, *sorted([first.id, second.id])]
        clock.advance(5)
        again = directive_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "be  BRIEF", now=clock.now()
        )
        assert again.id == first.id and again.content == "be  BRIEF"
        assert directive_store.list_directives(A)[0].id == first.id
        assert third.topic == "football" and third.status is DirectiveStatus.ACTIVE

    def test_suggestions_are_drafts_that_only_approval_activates(
        self, directive_store: DirectiveStore, clock: ManualClock
    ) -> None:
        """R-DIR-1: suggestion = draft, insert-if-absent; rejected stays rejected; only
        draft→active and draft→rejected are allowed."""
        draft = directive_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "Reply in German", now=clock.now()
        )
        assert draft is not None and draft.status is DirectiveStatus.DRAFT
        assert draft.source is DirectiveSource.DERIVED_SUGGESTION
        rejected = directive_store.set_directive_status(
            A, draft.id, DirectiveStatus.REJECTED, now=clock.now()
        )
        assert rejected.status is DirectiveStatus.REJECTED
        assert (
            directive_store.suggest_directive(
                A, DirectiveKind.INSTRUCTION, "reply in german", now=clock.now()
            )
            is None
        )
        assert directive_store.list_directives(A)[0].status is DirectiveStatus.REJECTED
        for status in (DirectiveStatus.ACTIVE, DirectiveStatus.DRAFT):
            with pytest.raises(ValidationError):
                directive_store.set_directive_status(A, draft.id, status, now=clock.now())
        other = directive_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "Cite sources", now=clock.now()
        )
        assert other is not None
        active = directive_store.set_directive_status(
            A, other.id, DirectiveStatus.ACTIVE, now=clock.now()
        )
        assert active.status is DirectiveStatus.ACTIVE
        with pytest.raises(ValidationError):
            directive_store.set_directive_status(
                A, other.id, DirectiveStatus.REJECTED, now=clock.now()
            )
        assert [
            d.id for d in directive_store.list_directives(A, status=DirectiveStatus.ACTIVE)
        ] == [other.id]

    def test_active_directives_are_capped_at_sixty_four(
        self, directive_store: DirectiveStore, clock: ManualClock
    ) -> None:
        """R-DIR-1: the 65th activation — create or approve — is a typed capacity error."""
        for i in range(64):
            directive_store.create_directive(
                A, DirectiveKind.INSTRUCTION, f"rule {i}", now=clock.now()
            )
        with pytest.raises(DirectiveCapacityExceeded):
            directive_store.create_directive(
                A, DirectiveKind.INSTRUCTION, "rule 64", now=clock.now()
            )
        draft = directive_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "rule 65", now=clock.now()
        )
        assert draft is not None
        with pytest.raises(DirectiveCapacityExceeded):
            directive_store.set_directive_status(
                A, draft.id, DirectiveStatus.ACTIVE, now=clock.now()
            )
        directive_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "rule 3", now=clock.now()
        )  # upsert
        directive_store.create_directive(B, DirectiveKind.INSTRUCTION, "rule 64", now=clock.now())

    @pytest.mark.parametrize(
        ("kind", "topic"),
        [
            (DirectiveKind.SUPPRESS_TOPIC, "中"),
            (DirectiveKind.SUPPRESS_TOPIC, " \u200b "),
            (DirectiveKind.SUPPRESS_TOPIC, None),
            (DirectiveKind.INSTRUCTION, "football"),
        ],
    )
    def test_directive_topics_must_be_specific_and_only_on_suppressions(
        self,
        directive_store: DirectiveStore,
        clock: ManualClock,
        kind: DirectiveKind,
        topic: str | None,
    ) -> None:
        """R-DIR-2: over-broad, missing or stray topics are refused on write, naming `topic`."""
        for write in (directive_store.create_directive, directive_store.suggest_directive):
            with pytest.raises(ValidationError) as caught:
                write(A, kind, "some directive text", topic=topic, now=clock.now())
            assert caught.value.field == "topic"
        assert directive_store.list_directives(A) == []

    def test_secret_directive_text_is_refused_before_anything_is_stored(
        self, directive_store: DirectiveStore, clock: ManualClock
    ) -> None:
        """R-PRIV-1: directive content passes the store's secret policy too."""
        with pytest.raises(SecretRejected):
            directive_store.create_directive(
                A, DirectiveKind.INSTRUCTION, f"use {SECRET_SAMPLE}", now=clock.now()
            )
        assert directive_store.list_directives(A) == []

    def test_another_agents_directive_ids_behave_like_unknown_ids(
        self, directive_store: DirectiveStore, clock: ManualClock
    ) -> None:
        """R-PRIV-2: B cannot approve, see or list A's directive; A's stays a draft."""
        directive = directive_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "Answer tersely", now=clock.now()
        )
        assert directive is not None
        with pytest.raises(NotFound):
            directive_store.set_directive_status(
                B, directive.id, DirectiveStatus.ACTIVE, now=clock.now()
            )
        with pytest.raises(NotFound):
            directive_store.set_directive_status(
                A, "dir-unknown", DirectiveStatus.ACTIVE, now=clock.now()
            )
        assert directive_store.list_directives(B) == []
        assert [d.status for d in directive_store.list_directives(A)] == [DirectiveStatus.DRAFT]
