"""`ForgettingContract`: the `Forgetting` role — tombstones suppress exact replays except an
explicit user add and belong to their owner, internal rows are refused, a clear fences
reads (R-FORGET-1, R-FORGET-3, R-WRITE-4/5, R-PRIV-2, R-DOM-1)."""

from __future__ import annotations

import unicodedata
from typing import Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import (
    BERLIN,
    EXTRACTION,
    HOME,
    MODEL_TOOL,
    USER_ADD,
    A,
    B,
    RoleCases,
    role_fixture,
)
from memory_contracts.claim_store.support import claim_draft
from memory_contracts.fakes import ManualClock
from memory_core.domain.errors import StoreError, ValidationError
from memory_core.domain.scope import Scope
from memory_core.ports.claims import ClaimReader, ClaimWriter, Forgetting, InsertStatus

__all__ = ["ForgettingContract", "ForgettingStore"]


@runtime_checkable
class ForgettingStore(ClaimReader, ClaimWriter, Forgetting, Protocol):
    """What the contract calls: its role, and the claim records that set cases up."""


class ForgettingContract(RoleCases):
    """Inherit, implement `make_forgetting_store`; pytest collects the cases."""

    forgetting_store = role_fixture("forgetting_store", "make_forgetting_store", ForgettingStore)

    def test_forgotten_claim_replay_is_suppressed_except_for_an_explicit_user_add(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-FORGET-1, R-WRITE-4/5: exact replays (whitespace, NFC, other kind) create 0 rows
        through extraction and the model tool; one user add re-creates it, atomically."""
        text = "Lives at Rosenstraße 5"
        claim = self._add(forgetting_store, clock, text)
        deleted = forgetting_store.delete(A, claim.id, now=clock.now())
        assert deleted.tombstones_written == 3  # provenance, content, folded content
        replays = [text, f"  {text}  ", unicodedata.normalize("NFD", text), text.replace(" ", "\t")]
        for origin in (EXTRACTION, MODEL_TOOL):
            for variant in replays:
                for kind in ("semantic", "episodic"):
                    outcome = forgetting_store.insert(
                        claim_draft(variant, kind=kind), origin=origin, now=clock.now()
                    )
                    assert outcome.status is InsertStatus.SUPPRESSED, (origin, variant, kind)
        assert forgetting_store.list_claims(A, include_inactive=True) == []
        again = forgetting_store.insert(claim_draft(text), origin=USER_ADD, now=clock.now())
        assert again.status is InsertStatus.INSERTED and again.released_tombstones >= 1
        assert len(forgetting_store.list_claims(A)) == 1
        later = forgetting_store.insert(claim_draft(text), origin=MODEL_TOOL, now=clock.now())
        assert later.status is InsertStatus.DUPLICATE

    def test_a_batch_suppresses_its_tombstoned_member_and_stores_the_rest(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-FORGET-1, R-WRITE-4: one insert batch decides each draft as if it came alone,
        in order: the forgotten replay is suppressed, its neighbours and an in-batch repeat of
        a new fact are not, and nothing forgotten comes back."""
        forgotten = self._add(forgetting_store, clock, "Lives at Rosenstraße 5")
        forgetting_store.delete(A, forgotten.id, now=clock.now())
        outcomes = forgetting_store.insert_many(
            [
                claim_draft("Has a cat"),
                claim_draft("  Lives at Rosenstraße 5 ", kind="episodic"),
                claim_draft("Plays the oboe"),
                claim_draft("Has  a cat"),
            ],
            origin=EXTRACTION,
            now=clock.now(),
        )
        assert [o.status for o in outcomes] == [
            InsertStatus.INSERTED,
            InsertStatus.SUPPRESSED,
            InsertStatus.INSERTED,
            InsertStatus.DUPLICATE,
        ]
        assert outcomes[1].claim is None
        assert outcomes[3].claim is not None and outcomes[0].claim is not None
        assert outcomes[3].claim.id == outcomes[0].claim.id
        stored = sorted(c.content for c in forgetting_store.list_claims(A, include_inactive=True))
        assert stored == ["Has a cat", "Plays the oboe"]

    def test_a_user_add_batch_releases_a_tombstone_once_for_the_rest_of_the_batch(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-WRITE-5: the first member that repeats a forgotten text releases its tombstones;
        a later member of the same batch sharing its content identity (another kind) finds
        them gone, as it would inserted alone right after, and releases nothing."""
        text = "Works at the harbour"
        forgotten = self._add(forgetting_store, clock, text)
        forgetting_store.delete(A, forgotten.id, now=clock.now())
        outcomes = forgetting_store.insert_many(
            [claim_draft(text), claim_draft(text, kind="episodic")],
            origin=USER_ADD,
            now=clock.now(),
        )
        assert [o.status for o in outcomes] == [InsertStatus.INSERTED, InsertStatus.INSERTED]
        assert outcomes[0].released_tombstones >= 1
        assert outcomes[1].released_tombstones == 0
        replay = forgetting_store.insert(
            claim_draft(text, scope=Scope.session("s9")), origin=MODEL_TOOL, now=clock.now()
        )
        assert replay.status is InsertStatus.INSERTED  # the folded tombstone went with them

    def test_the_model_tool_cannot_replay_a_forgotten_fact_respelt_or_at_another_scope(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-WRITE-5: the folded identity (case, punctuation, format characters; no scope)
        suppresses `memory_remember`; extraction keeps the exact rule; a user add releases."""
        claim = self._add(forgetting_store, clock, "Lives in Berlin", scope=Scope.session("s1"))
        forgetting_store.delete(A, claim.id, now=clock.now())
        for variant, scope in (
            ("lives in berlin.", Scope.agent()),
            ("LIVES IN BER\u200bLIN", Scope.session("s2")),
            ("Lives, in Berlin!", Scope.session("s1")),
        ):
            outcome = forgetting_store.insert(
                claim_draft(variant, scope=scope), origin=MODEL_TOOL, now=clock.now()
            )
            assert outcome.status is InsertStatus.SUPPRESSED, variant
        extracted = forgetting_store.insert(
            claim_draft("lives in berlin"), origin=EXTRACTION, now=clock.now()
        )
        assert extracted.status is InsertStatus.INSERTED
        readded = forgetting_store.insert(
            claim_draft("Lives in Berlin."), origin=USER_ADD, now=clock.now()
        )
        assert readded.status is InsertStatus.INSERTED and readded.released_tombstones >= 1

    def test_similar_but_independent_facts_are_not_suppressed(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-FORGET-1: only exact replays are suppressed."""
        claim = self._add(forgetting_store, clock, "Lives in Berlin")
        forgetting_store.delete(A, claim.id, now=clock.now())
        self._add(forgetting_store, clock, "Lives in Berlin Mitte")
        self._add(forgetting_store, clock, "lives in berlin")  # case is preserved in identities

    def test_tombstones_belong_to_their_owner(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-PRIV-2: A forgetting a text never suppresses B's identical claim."""
        claim = self._add(forgetting_store, clock, "Likes jazz")
        forgetting_store.delete(A, claim.id, now=clock.now())
        self._add(forgetting_store, clock, "Likes jazz", agent_id=B)

    @pytest.mark.parametrize("kind", ["persona", "working"])
    def test_lifecycle_and_delete_refuse_internal_rows(
        self, forgetting_store: ForgettingStore, clock: ManualClock, kind: str
    ) -> None:
        """R-DOM-1: persona/working rows are never archived, restored, edited or deleted here."""
        row = self._add(forgetting_store, clock, "internal projection text", kind=kind)
        now = clock.now()
        for call in (
            lambda: forgetting_store.archive(A, row.id, now=now),
            lambda: forgetting_store.restore(A, row.id, now=now),
            lambda: forgetting_store.delete(A, row.id, now=now),
            lambda: forgetting_store.update_content(
                A, row.id, expected_revision=1, content="x", now=now
            ),
        ):
            with pytest.raises(ValidationError):
                call()
        assert forgetting_store.get(A, row.id) == row

    def test_find_live_by_slot_is_fenced_by_a_clear(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-FORGET-3: nothing is found while a clear is pending."""
        self._add(forgetting_store, clock, BERLIN, slot=HOME)
        assert forgetting_store.find_live_by_slot(A, Scope.agent(), HOME) is not None
        forgetting_store.begin_clear(A, now=clock.now())
        assert forgetting_store.find_live_by_slot(A, Scope.agent(), HOME) is None

    def test_checkpoint_after_close_is_a_store_error(
        self, forgetting_store: ForgettingStore, clock: ManualClock
    ) -> None:
        """R-STORE-1, R-PRIV-3: a closed store cannot pretend forgetting became physical."""
        self._add(forgetting_store, clock, "before close")
        forgetting_store.close()
        with pytest.raises(StoreError):
            forgetting_store.checkpoint()
