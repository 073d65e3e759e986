"""`ConsolidationContract`: the `Consolidation` role — the dirty queue's generations and
rotation, a merge in one transaction with its lineage edge, forgetting a survivor forgets
what it absorbed, the decay rule, and the maintenance audit trail (R-MAINT-1, R-LINEAGE-1,
R-FORGET-1)."""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import EXTRACTION, A, RoleCases, role_fixture
from memory_contracts.claim_store.support import SECRET_SAMPLE, claim_draft
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Category
from memory_core.domain.errors import RevisionConflict, ValidationError
from memory_core.ports.claims import (
    AuditReader,
    ClaimReader,
    ClaimWriter,
    Consolidation,
    DerivationKind,
    Forgetting,
    InsertStatus,
    LineageReader,
    MergeRequest,
)

__all__ = ["ConsolidationContract", "ConsolidationStore"]

CALLED, NAMED = "The user's cat is called Miso.", "The user's cat is named Miso."


@runtime_checkable
class ConsolidationStore(
    AuditReader, ClaimReader, ClaimWriter, Consolidation, Forgetting, LineageReader, Protocol
):
    """What the contract calls: its role, and the records, lineage and delete it checks."""


class ConsolidationContract(RoleCases):
    """Inherit, implement `make_consolidation_store`; pytest collects the cases."""

    consolidation_store = role_fixture(
        "consolidation_store", "make_consolidation_store", ConsolidationStore
    )

    def test_a_write_seeds_and_a_settle_keeps_a_seed_dirtied_again(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """R-MAINT-1: a committed insert upserts a seed; settling deletes it only at the
        generation read, so a claim changed during the pass keeps its seed."""
        store = consolidation_store
        claim = self._add(store, clock, "likes green tea")
        [seed] = store.list_dirty(A, limit=64)
        assert (seed.memory_id, seed.claim_revision) == (claim.id, claim.revision)
        assert store.dirty_agents(limit=10) == [A]
        clock.advance(1)
        store.archive(A, claim.id, now=clock.now())  # re-dirtied while "processing"
        assert store.settle_dirty(A, [seed]) == 0
        [again] = store.list_dirty(A, limit=64)
        assert again.generation > seed.generation
        assert store.settle_dirty(A, [again]) == 1
        assert store.list_dirty(A, limit=64) == []
        assert store.list_dirty("agent-other", limit=64) == []

    def test_a_deferred_seed_moves_behind_unprocessed_work(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """R-MAINT-1: a transient failure rotates its seed behind the agent's other seeds."""
        store = consolidation_store
        first = self._add(store, clock, "first fact")
        clock.advance(1)
        second = self._add(store, clock, "second fact")
        seeds = store.list_dirty(A, limit=64)
        assert [s.memory_id for s in seeds] == [first.id, second.id]
        assert store.defer_dirty(A, seeds[:1], now=clock.now()) == 1
        assert [s.memory_id for s in store.list_dirty(A, limit=64)] == [second.id, first.id]

    def test_a_merge_retires_one_row_with_a_merge_edge_in_one_transaction(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1, §8.4: the survivor takes the higher importance, the missing
        category and confidence + 0.1; the other is superseded by it; one `merge` edge
        retired → survivor; both seeds settle."""
        store = consolidation_store
        old = self._add(store, clock, CALLED, importance=0.9, category=Category.PROJECT_FACT)
        clock.advance(1)
        new = self._add(store, clock, NAMED, importance=0.4, confidence=0.6)
        seeds = tuple(store.list_dirty(A, limit=64))
        survivor = store.merge_claims(
            A,
            MergeRequest(
                survivor_id=new.id,
                survivor_revision=new.revision,
                retired_id=old.id,
                retired_revision=old.revision,
                settle=seeds,
            ),
            now=clock.now(),
        )
        assert survivor.id == new.id and survivor.is_recallable
        assert survivor.importance == pytest.approx(0.9)
        assert survivor.confidence == pytest.approx(0.7)
        assert survivor.category is Category.PROJECT_FACT
        assert store.get(A, old.id).superseded_by == new.id
        assert self._edges(store, new.id) == [(old.id, new.id, DerivationKind.MERGE)]
        assert store.list_dirty(A, limit=64) == []
        assert [c.id for c in store.list_claims(A)] == [new.id]
        assert store.merged_into(A, new.id) == [old.id]

    def test_a_merge_decided_on_a_moved_row_changes_nothing(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1: CAS on both revisions; a loss leaves both rows and no edge."""
        store = consolidation_store
        old = self._add(store, clock, CALLED)
        new = self._add(store, clock, NAMED)
        moved = store.archive(A, old.id, now=clock.now())
        request = MergeRequest(
            survivor_id=new.id,
            survivor_revision=new.revision,
            retired_id=old.id,
            retired_revision=old.revision,
        )
        with pytest.raises(RevisionConflict):
            store.merge_claims(A, request, now=clock.now())
        assert store.get(A, new.id) == new
        assert store.get(A, old.id) == moved
        assert self._edges(store, new.id) == []

    @pytest.mark.parametrize("given", ["new", "tombstoned", "secret", "retired's", "other row's"])
    def test_a_merged_wording_is_taken_only_when_it_is_new_and_allowed(
        self, consolidation_store: ConsolidationStore, clock: ManualClock, given: str
    ) -> None:
        """§8.4: the model's merged text becomes the survivor's (revision + 1, the merge
        edge as without it) unless the secret policy refuses it, the user forgot it, or
        another row holds it — then the survivor keeps its wording. The former wording stays
        retired into the survivor: deleting the survivor suppresses a replay of every text
        (R-FORGET-1)."""
        store = consolidation_store
        merged_text = {
            "new": "The user's cat is Miso.",
            "tombstoned": "The user's cat is Miso.",
            "secret": f"The user's cat is Miso, key {SECRET_SAMPLE}.",
            "retired's": CALLED,
            "other row's": "The user owns a cat named Miso.",
        }[given]
        if given == "tombstoned":
            forgotten = self._add(store, clock, merged_text)
            store.delete(A, forgotten.id, now=clock.now())
        if given == "other row's":
            self._add(store, clock, merged_text)
        old = self._add(store, clock, CALLED)
        clock.advance(1)
        new = self._add(store, clock, NAMED)
        request = MergeRequest(
            survivor_id=new.id,
            survivor_revision=new.revision,
            retired_id=old.id,
            retired_revision=old.revision,
            content=merged_text,
        )
        survivor = store.merge_claims(A, request, now=clock.now())
        taken = given == "new"
        assert survivor.id == new.id and survivor.revision == new.revision + 1
        assert survivor.content == (merged_text if taken else NAMED)
        assert (old.id, new.id, DerivationKind.MERGE) in self._edges(store, new.id)
        assert SECRET_SAMPLE not in repr(store.list_claims(A, include_inactive=True))
        store.delete(A, new.id, now=clock.now())
        replays = [CALLED, NAMED] + ([merged_text] if taken else [])
        for text in replays:
            replay = store.insert(claim_draft(text), origin=EXTRACTION, now=clock.now())
            assert replay.status is InsertStatus.SUPPRESSED, text

    def test_deleting_the_survivor_forgets_what_it_absorbed(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """R-FORGET-1, §8.4: both exact texts are tombstoned; neither replays."""
        store = consolidation_store
        old = self._add(store, clock, CALLED)
        clock.advance(1)
        new = self._add(store, clock, NAMED)
        request = MergeRequest(
            survivor_id=new.id,
            survivor_revision=new.revision,
            retired_id=old.id,
            retired_revision=old.revision,
        )
        store.merge_claims(A, request, now=clock.now())
        outcome = store.delete(A, new.id, now=clock.now())
        assert outcome.tombstones_written >= 2
        assert store.list_claims(A, include_inactive=True) == []
        for text in (CALLED, NAMED):
            replay = store.insert(claim_draft(text), origin=EXTRACTION, now=clock.now())
            assert replay.status is InsertStatus.SUPPRESSED, text

    def test_only_a_decayed_old_claim_is_archived_as_stale(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """§8.3: decay < 0.05 and created > 90 days ago; importance slows the decay."""
        store = consolidation_store
        dull = self._add(store, clock, "a dull old remark", importance=0.0)
        vital = self._add(store, clock, "a vital old fact", importance=1.0)
        clock.advance(timedelta(days=140).total_seconds())  # past 129.66 d, short of 259.3 d
        fresh = self._add(store, clock, "a fresh fact", importance=0.0)
        archived = store.archive_stale(A, now=clock.now(), limit=16)
        assert archived == [dull.id]
        assert store.get(A, vital.id).is_recallable and store.get(A, fresh.id).is_recallable

    def test_the_audit_trail_reads_back_and_keeps_the_newest_operational_events(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """§8.8: events hold ids and counts; retention trims the oldest operational
        events beyond `keep`, at most `limit` per call."""
        store = consolidation_store
        for n in range(5):
            store.record_event(
                A, "memory/maintenance", status="completed", refs={"n": n}, now=clock.now()
            )
            clock.advance(1)
        assert store.last_event_at(A, "memory/maintenance", status="completed") == (
            clock.now() - timedelta(seconds=1)
        )
        assert store.last_event_at(A, "memory/maintenance", status="failed") is None
        assert [e.refs["n"] for e in store.list_audit(A, limit=2)] == [4, 3]
        assert store.retain_audit(A, keep=2, limit=2) == 2
        assert store.retain_audit(A, keep=2, limit=10) == 1
        assert [e.refs["n"] for e in store.list_audit(A, limit=10)] == [4, 3]
        # Scheduler events name no claim: a claim's history (`memory_ids`) sees none of them.
        assert store.list_audit(A, limit=10, memory_ids=["no-such-claim"]) == []
        assert store.list_audit(A, limit=10, memory_ids=[]) == []

    def test_insights_commit_with_an_edge_from_every_source(
        self, consolidation_store: ConsolidationStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1, §8.5: each inserted insight gets a `reflection` edge from every
        source in its transaction; a forgotten insight is suppressed and gets none."""
        store = consolidation_store
        sources = [self._add(store, clock, f"fact {n}") for n in range(3)]
        forgotten = self._add(store, clock, "An old insight.", kind="reflection")
        store.delete(A, forgotten.id, now=clock.now())
        drafts = [
            claim_draft(text, kind="reflection", importance=0.8)
            for text in ("The user values routine.", "An old insight.")
        ]
        outcomes = store.insert_reflections(
            A, drafts, sources=[s.id for s in sources], now=clock.now()
        )
        assert [o.status for o in outcomes] == [InsertStatus.INSERTED, InsertStatus.SUPPRESSED]
        insight = outcomes[0].claim
        assert insight is not None and insight.kind.value == "reflection"
        assert sorted(self._edges(store, insight.id)) == sorted(
            (s.id, insight.id, DerivationKind.REFLECTION) for s in sources
        )
        with pytest.raises(ValidationError):
            store.insert_reflections(A, [claim_draft("not one")], sources=[], now=clock.now())
