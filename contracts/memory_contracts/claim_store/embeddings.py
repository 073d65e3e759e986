"""`EmbeddingBookkeepingContract`: the `EmbeddingBookkeeping` role — the ready set a vector
namespace must cover, and the resets after a model change (R-VEC-4, R-PROV-4)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory_contracts.claim_store.base import OTHER, A, B, RoleCases, role_fixture
from memory_contracts.claim_store.support import IDENTITY
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import EmbeddingState
from memory_core.ports.claims import (
    WHOLE_NAMESPACE,
    ClaimReader,
    ClaimWriter,
    EmbeddingBookkeeping,
    EmbeddingMark,
    VectorCleanup,
)
from memory_core.ports.claims import CleanupSource as Source

__all__ = ["EmbeddingBookkeepingContract", "EmbeddingStore"]


@runtime_checkable
class EmbeddingStore(ClaimReader, ClaimWriter, EmbeddingBookkeeping, Protocol):
    """What the contract calls: its role, and the claim records that set cases up."""


class EmbeddingBookkeepingContract(RoleCases):
    """Inherit, implement `make_embedding_store`; pytest collects the cases."""

    embedding_store = role_fixture("embedding_store", "make_embedding_store", EmbeddingStore)

    def test_list_ready_ids_names_recallable_rows_ready_with_exactly_that_identity(
        self, embedding_store: EmbeddingStore, clock: ManualClock
    ) -> None:
        """R-PROV-4, R-VEC-4: warm-up sees only rows embedded in the current vector space."""
        rows = [self._add(embedding_store, clock, f"fact number {i}") for i in range(6)]
        for row in rows[:4]:
            self._ready(embedding_store, clock, row)
        self._ready(embedding_store, clock, rows[4], OTHER)
        embedding_store.archive(A, rows[3].id, now=clock.now())
        theirs = self._add(embedding_store, clock, "fact number 0", agent_id=B)
        assert embedding_store.mark_embedding(
            B, theirs.id, expected_revision=1, identity=IDENTITY, ready=True, now=clock.now()
        )
        assert embedding_store.list_ready_ids(A, IDENTITY) == sorted(r.id for r in rows[:3])
        assert embedding_store.list_ready_ids(A, OTHER) == [rows[4].id]
        assert embedding_store.list_ready_ids(B, IDENTITY) == [theirs.id]
        assert embedding_store.list_ready_ids("agent-unknown", IDENTITY) == []

    def test_pending_embeddings_carry_the_stored_text_and_revision_oldest_first(
        self, embedding_store: EmbeddingStore, clock: ManualClock
    ) -> None:
        """R-WRITE-6, R-VEC-4: the drain embeds what is stored now (an edit's text, not the
        row it replaced) and marks against the revision it read; only the owner's
        recallable pending rows, oldest first, `limit` of them."""
        first = self._add(embedding_store, clock, "Plays the cello on Sundays")
        clock.advance(1)
        second = self._add(embedding_store, clock, "Lives near the harbour")
        clock.advance(1)
        edited = embedding_store.update_content(
            A,
            second.id,
            expected_revision=second.revision,
            content="Moved inland in May",
            now=clock.now(),
        )
        clock.advance(1)
        ready = self._add(embedding_store, clock, "Keeps bees")
        self._ready(embedding_store, clock, ready)
        archived = self._add(embedding_store, clock, "Collects stamps")
        embedding_store.archive(A, archived.id, now=clock.now())
        self._add(embedding_store, clock, "persona text", kind="persona")
        self._add(embedding_store, clock, "Their own fact", agent_id=B)
        pending = embedding_store.list_pending_embeddings(A, limit=10)
        assert [(p.id, p.revision, p.content) for p in pending] == [
            (first.id, first.revision, "Plays the cello on Sundays"),
            (edited.id, edited.revision, "Moved inland in May"),
        ]
        assert [p.id for p in embedding_store.list_pending_embeddings(A, limit=1)] == [first.id]
        assert embedding_store.list_pending_embeddings(A, limit=0) == []

    def test_reset_of_all_embeddings_keeps_revisions_and_skips_other_rows(
        self, embedding_store: EmbeddingStore, clock: ManualClock
    ) -> None:
        """R-PROV-4: an identity change re-embeds every recallable row of the owner only."""
        live = [self._add(embedding_store, clock, f"live fact {i}") for i in range(3)]
        for row in live:
            self._ready(embedding_store, clock, row)
        archived = self._add(embedding_store, clock, "archived fact")
        self._ready(embedding_store, clock, archived)
        archived = embedding_store.archive(A, archived.id, now=clock.now())
        persona = self._add(embedding_store, clock, "persona text", kind="persona")
        theirs = self._add(embedding_store, clock, "their fact", agent_id=B)
        assert embedding_store.mark_embedding(
            B, theirs.id, expected_revision=1, identity=IDENTITY, ready=True, now=clock.now()
        )
        clock.advance(60)
        assert embedding_store.reset_embeddings(A, None, now=clock.now()) == 3
        for row in live:
            reset = embedding_store.get(A, row.id)
            assert (reset.embedding_state, reset.embedding) == (EmbeddingState.PENDING, None)
            assert (reset.revision, reset.updated_at) == (row.revision, row.updated_at)
        assert embedding_store.get(A, archived.id) == archived
        assert embedding_store.get(A, persona.id).embedding_state is EmbeddingState.NOT_APPLICABLE
        assert embedding_store.get(B, theirs.id).embedding_state is EmbeddingState.READY
        pending = embedding_store.list_pending_embeddings(A, limit=10)
        assert sorted(c.id for c in pending) == sorted(r.id for r in live)
        assert (
            embedding_store.reset_embeddings(A, None, now=clock.now()) == 0
        )  # nothing left to change

    def test_reset_of_named_embeddings_touches_only_the_owners_named_rows(
        self, embedding_store: EmbeddingStore, clock: ManualClock
    ) -> None:
        """R-VEC-4: ids missing from the vector store are re-embedded; the old revision still
        marks the new vector ready, because a reset is not a content change."""
        first, second, third = (
            self._add(embedding_store, clock, f"named fact {i}") for i in range(3)
        )
        for row in (first, second):
            self._ready(embedding_store, clock, row)
        embedding_store.mark_embedding(
            A, third.id, expected_revision=1, identity=None, ready=False, now=clock.now()
        )
        theirs = self._add(embedding_store, clock, "their named fact", agent_id=B)
        count = embedding_store.reset_embeddings(
            A, [second.id, "mem-unknown", theirs.id, second.id, third.id], now=clock.now()
        )
        assert count == 2
        assert embedding_store.get(A, first.id).embedding_state is EmbeddingState.READY
        assert embedding_store.get(A, third.id).embedding_state is EmbeddingState.PENDING
        assert embedding_store.list_ready_ids(A, IDENTITY) == [first.id]
        self._ready(embedding_store, clock, embedding_store.get(A, second.id))
        assert embedding_store.list_ready_ids(A, IDENTITY) == sorted([first.id, second.id])

    def test_a_batch_of_marks_answers_each_cas_like_a_single_mark(
        self, embedding_store: EmbeddingStore, clock: ManualClock
    ) -> None:
        """R-WRITE-6, R-VEC-4: one batch records outcomes of several agents' claims; a mark
        computed for another revision, or that names another owner's claim, answers False and
        changes nothing, and its neighbours in the batch still land."""
        first, stale, refused = (self._add(embedding_store, clock, f"batch {i}") for i in range(3))
        theirs = self._add(embedding_store, clock, "their batch fact", agent_id=B)

        def mark(
            agent: str, claim_id: str, *, ready: bool = True, revision: int = 1
        ) -> EmbeddingMark:
            return EmbeddingMark(
                agent_id=agent, claim_id=claim_id, expected_revision=revision,
                identity=IDENTITY, ready=ready,
            )  # fmt: skip

        marks = [
            mark(A, first.id),
            mark(A, stale.id, revision=2),  # computed for a revision the row is not at
            mark(A, refused.id, ready=False),  # the provider refused it: ERROR
            mark(B, theirs.id),
            mark(A, theirs.id),  # not A's claim
        ]
        assert list(embedding_store.mark_embeddings(marks, now=clock.now())) == [
            True, False, True, True, False,
        ]  # fmt: skip
        assert embedding_store.list_ready_ids(A, IDENTITY) == [first.id]
        assert embedding_store.list_ready_ids(B, IDENTITY) == [theirs.id]
        assert embedding_store.get(A, stale.id).embedding_state is EmbeddingState.PENDING
        assert embedding_store.get(A, refused.id).embedding_state is EmbeddingState.ERROR
        assert list(embedding_store.mark_embeddings([], now=clock.now())) == []

    def test_the_vector_cleanup_queue_says_which_vectors_may_stay_and_keeps_each_source(
        self, embedding_store: EmbeddingStore, clock: ManualClock
    ) -> None:
        """R-FORGET-1, R-VEC-4: a queued claim keeps its vector only while it is READY; a
        path finishes only its own source's rows; the whole-namespace row names no claim."""
        ready, pending, gone = (self._add(embedding_store, clock, f"queued {i}") for i in range(3))
        self._ready(embedding_store, clock, ready)
        self._ready(embedding_store, clock, gone)
        embedding_store.archive(A, gone.id, now=clock.now())
        theirs = self._add(embedding_store, clock, "their queued fact", agent_id=B)
        ids = [ready.id, pending.id, gone.id]
        embedding_store.queue_vector_cleanup(A, ids, source=Source.DRAIN)
        embedding_store.queue_vector_cleanup(A, [gone.id, gone.id], source=Source.FORGET)
        embedding_store.queue_vector_cleanup(A, [WHOLE_NAMESPACE], source=Source.NAMESPACE)
        embedding_store.queue_vector_cleanup(B, [theirs.id], source=Source.DRAIN)
        embedding_store.queue_vector_cleanup(B, [], source=Source.DRAIN)
        keep = {ready.id: True, pending.id: False, gone.id: False, WHOLE_NAMESPACE: False}
        expected = [VectorCleanup(agent_id=A, claim_id=i, keep=keep[i]) for i in sorted(keep)]
        assert list(embedding_store.pending_vector_cleanups(A, limit=10)) == expected
        assert list(embedding_store.pending_vector_cleanups(A, limit=2)) == expected[:2]
        everyone = embedding_store.pending_vector_cleanups(limit=10)
        assert [(c.agent_id, c.claim_id) for c in everyone][-1] == (B, theirs.id)
        # The drain's rows go; the forget row of the same claim stays until its path ends.
        assert embedding_store.finish_vector_cleanup(A, ids, source=Source.DRAIN) == 3
        left = embedding_store.pending_vector_cleanups(A, limit=10)
        assert [c.claim_id for c in left] == sorted([WHOLE_NAMESPACE, gone.id])
        assert (
            embedding_store.finish_vector_cleanup(A, [gone.id, WHOLE_NAMESPACE], source=None) == 2
        )
        assert embedding_store.pending_vector_cleanups(A, limit=10) == []
        assert len(embedding_store.pending_vector_cleanups(B, limit=10)) == 1
