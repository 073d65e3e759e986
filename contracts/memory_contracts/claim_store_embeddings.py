"""Contract cases for the embedding bookkeeping the vector index relies on (R-VEC-4, R-PROV-4)."""

from __future__ import annotations

from typing import Any

from memory_contracts.claim_store_support import IDENTITY
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Claim, EmbeddingIdentity, EmbeddingState
from memory_core.ports.claims import ClaimStore

__all__ = ["EmbeddingBookkeepingCases"]

A, B = "agent-a", "agent-b"
OTHER = EmbeddingIdentity(provider="contract", model="m2", dim=8)


class EmbeddingBookkeepingCases:
    _add: Any  # provided by ClaimStoreContract

    @staticmethod
    def _ready(
        store: ClaimStore, clock: ManualClock, claim: Claim, identity: EmbeddingIdentity = IDENTITY
    ) -> None:
        assert store.mark_embedding(
            A,
            claim.id,
            expected_revision=claim.revision,
            identity=identity,
            ready=True,
            now=clock.now(),
        )

    def test_list_ready_ids_names_recallable_rows_ready_with_exactly_that_identity(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-PROV-4, R-VEC-4: warm-up sees only rows embedded in the current vector space."""
        rows = [self._add(claim_store, clock, f"fact number {i}") for i in range(6)]
        for row in rows[:4]:
            self._ready(claim_store, clock, row)
        self._ready(claim_store, clock, rows[4], OTHER)
        claim_store.archive(A, rows[3].id, now=clock.now())
        theirs = self._add(claim_store, clock, "fact number 0", agent_id=B)
        assert claim_store.mark_embedding(
            B, theirs.id, expected_revision=1, identity=IDENTITY, ready=True, now=clock.now()
        )
        assert claim_store.list_ready_ids(A, IDENTITY) == sorted(r.id for r in rows[:3])
        assert claim_store.list_ready_ids(A, OTHER) == [rows[4].id]
        assert claim_store.list_ready_ids(B, IDENTITY) == [theirs.id]
        assert claim_store.list_ready_ids("agent-unknown", IDENTITY) == []

    def test_reset_of_all_embeddings_keeps_revisions_and_skips_other_rows(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-PROV-4: an identity change re-embeds every recallable row of the owner only."""
        live = [self._add(claim_store, clock, f"live fact {i}") for i in range(3)]
        for row in live:
            self._ready(claim_store, clock, row)
        archived = self._add(claim_store, clock, "archived fact")
        self._ready(claim_store, clock, archived)
        archived = claim_store.archive(A, archived.id, now=clock.now())
        persona = self._add(claim_store, clock, "persona text", kind="persona")
        theirs = self._add(claim_store, clock, "their fact", agent_id=B)
        assert claim_store.mark_embedding(
            B, theirs.id, expected_revision=1, identity=IDENTITY, ready=True, now=clock.now()
        )
        clock.advance(60)
        assert claim_store.reset_embeddings(A, None, now=clock.now()) == 3
        for row in live:
            reset = claim_store.get(A, row.id)
            assert (reset.embedding_state, reset.embedding) == (EmbeddingState.PENDING, None)
            assert (reset.revision, reset.updated_at) == (row.revision, row.updated_at)
        assert claim_store.get(A, archived.id) == archived
        assert claim_store.get(A, persona.id).embedding_state is EmbeddingState.NOT_APPLICABLE
        assert claim_store.get(B, theirs.id).embedding_state is EmbeddingState.READY
        pending = claim_store.list_pending_embeddings(A, limit=10)
        assert sorted(c.id for c in pending) == sorted(r.id for r in live)
        assert claim_store.reset_embeddings(A, None, now=clock.now()) == 0  # nothing left to change

    def test_reset_of_named_embeddings_touches_only_the_owners_named_rows(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-VEC-4: ids missing from the vector claim_store are re-embedded; the old revision still
        marks the new vector ready, because a reset is not a content change."""
        first, second, third = (self._add(claim_store, clock, f"named fact {i}") for i in range(3))
        for row in (first, second):
            self._ready(claim_store, clock, row)
        claim_store.mark_embedding(
            A, third.id, expected_revision=1, identity=None, ready=False, now=clock.now()
        )
        theirs = self._add(claim_store, clock, "their named fact", agent_id=B)
        count = claim_store.reset_embeddings(
            A, [second.id, "mem-unknown", theirs.id, second.id, third.id], now=clock.now()
        )
        assert count == 2
        assert claim_store.get(A, first.id).embedding_state is EmbeddingState.READY
        assert claim_store.get(A, third.id).embedding_state is EmbeddingState.PENDING
        assert claim_store.list_ready_ids(A, IDENTITY) == [first.id]
        self._ready(claim_store, clock, claim_store.get(A, second.id))
        assert claim_store.list_ready_ids(A, IDENTITY) == sorted([first.id, second.id])

    def test_ready_ids_and_resets_are_fenced_by_a_pending_clear(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-3: during a clear the agent's rows are neither listed nor changed."""
        row = self._add(claim_store, clock, "fenced fact")
        self._ready(claim_store, clock, row)
        claim_store.begin_clear(A, now=clock.now())
        assert claim_store.list_ready_ids(A, IDENTITY) == []
        assert claim_store.reset_embeddings(A, None, now=clock.now()) == 0
        assert claim_store.reset_embeddings(A, [row.id], now=clock.now()) == 0
