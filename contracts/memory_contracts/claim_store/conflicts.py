"""`ConflictsContract`: the `Conflicts` role — a challenge is a record, never a second live
claim, and each resolution moves lifecycle and lineage in one transaction (reference §7.8,
R-LINEAGE-1)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import EXTRACTION, A, RoleCases, role_fixture
from memory_contracts.claim_store.support import claim_draft
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Claim, Lifecycle
from memory_core.domain.errors import NotFound, RevisionConflict
from memory_core.ports.claims import (
    ClaimReader,
    ClaimWriter,
    Conflicts,
    Consolidation,
    DerivationKind,
    Forgetting,
    InsertStatus,
    LineageReader,
    MergeRequest,
    Resolution,
)

__all__ = ["ConflictsContract", "ConflictsStore"]

LUNA, MISO, NALA = "The cat is called Luna.", "The cat is called Miso.", "The cat is called Nala."


@runtime_checkable
class ConflictsStore(
    ClaimReader, ClaimWriter, Conflicts, Consolidation, Forgetting, LineageReader, Protocol
):
    """What the contract calls: its role, the records and lineage it checks, and the
    removal paths (delete, merge) that must settle a challenge."""


class ConflictsContract(RoleCases):
    """Inherit, implement `make_conflicts_store`; pytest collects the cases."""

    conflicts_store = role_fixture("conflicts_store", "make_conflicts_store", ConflictsStore)

    def _challenge(
        self, store: ConflictsStore, clock: ManualClock, target: Claim, text: str
    ) -> Claim:
        clock.advance(1)
        outcome = store.challenge(
            A,
            target.id,
            claim_draft(text),
            expected_revision=store.get(A, target.id).revision,
            origin=EXTRACTION,
            now=clock.now(),
        )
        assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
        return outcome.claim

    def test_a_challenge_is_a_record_not_a_second_live_claim(
        self, conflicts_store: ConflictsStore, clock: ManualClock
    ) -> None:
        """§7.8: the challenger is conflicted (never listed as live), the target stays."""
        store = conflicts_store
        target = self._add(store, clock, LUNA)
        challenger = self._challenge(store, clock, target, MISO)
        assert challenger.lifecycle is Lifecycle.CONFLICTED
        assert [c.id for c in store.list_claims(A)] == [target.id]
        [conflict] = store.list_conflicts(A, limit=10)
        assert (conflict.challenger.id, conflict.target.id) == (challenger.id, target.id)
        assert store.list_conflicts("agent-other", limit=10) == []

    def test_a_challenge_of_a_moved_target_stores_nothing(
        self, conflicts_store: ConflictsStore, clock: ManualClock
    ) -> None:
        store = conflicts_store
        target = self._add(store, clock, LUNA)
        store.archive(A, target.id, now=clock.now())
        with pytest.raises(RevisionConflict):
            store.challenge(
                A,
                target.id,
                claim_draft(MISO),
                expected_revision=target.revision,
                origin=EXTRACTION,
                now=clock.now(),
            )
        assert store.list_claims(A, include_inactive=True)[0].id == target.id
        assert len(store.list_claims(A, include_inactive=True)) == 1

    @pytest.mark.parametrize("resolution", list(Resolution))
    def test_each_resolution_leaves_one_consistent_state(
        self, conflicts_store: ConflictsStore, clock: ManualClock, resolution: Resolution
    ) -> None:
        """R-LINEAGE-1, §7.8: keep_target retires the challenger into the target;
        keep_challenger retires the target and the sibling challenger into it; keep_both
        makes the challenger an ordinary claim. No open conflict is left either way."""
        store = conflicts_store
        target = self._add(store, clock, LUNA)
        challenger = self._challenge(store, clock, target, MISO)
        sibling = self._challenge(store, clock, target, NALA)
        clock.advance(1)
        standing = store.resolve_conflict(
            A, challenger.id, resolution, actor="user", now=clock.now()
        )
        live = {c.id for c in store.list_claims(A)}
        edges = self._edges(store, standing.id)
        if resolution is Resolution.KEEP_TARGET:
            assert standing.id == target.id and live == {target.id}
            assert (challenger.id, target.id, DerivationKind.SUPERSEDE) in edges
            assert [c.challenger.id for c in store.list_conflicts(A, limit=10)] == [sibling.id]
            return
        assert standing.id == challenger.id and standing.is_recallable
        if resolution is Resolution.KEEP_CHALLENGER:
            assert live == {challenger.id}
            assert store.get(A, target.id).superseded_by == challenger.id
            assert store.get(A, sibling.id).lifecycle is Lifecycle.ARCHIVED
            assert {e[0] for e in edges if e[1] == challenger.id} == {target.id, sibling.id}
            assert store.list_conflicts(A, limit=10) == []
        else:
            assert live == {target.id, challenger.id}
            assert [c.challenger.id for c in store.list_conflicts(A, limit=10)] == [sibling.id]
        with pytest.raises(NotFound):
            store.resolve_conflict(A, challenger.id, resolution, actor="user", now=clock.now())

    @pytest.mark.parametrize("removal", ["delete", "archive", "supersede", "edit"])
    def test_removing_a_challenged_target_parks_its_challengers(
        self, conflicts_store: ConflictsStore, clock: ManualClock, removal: str
    ) -> None:
        """§7.8, R-FORGET-1 (`memory_core.storage.conflicts`): whatever takes the target
        away, its challengers are archived and unlinked — not promoted to live (the user
        never confirmed the rival), not tombstoned (nobody asked to forget it) — and a
        restore makes one an ordinary claim."""
        store = conflicts_store
        target = self._add(store, clock, LUNA, slot="pet.cat.name")
        challenger = self._challenge(store, clock, target, MISO)
        sibling = self._challenge(store, clock, target, NALA)
        clock.advance(1)
        revision = store.get(A, target.id).revision
        if removal == "delete":
            store.delete(A, target.id, now=clock.now())
        elif removal == "archive":
            store.archive(A, target.id, now=clock.now())
        elif removal == "supersede":
            store.supersede(
                A,
                target.id,
                claim_draft("The cat is called Otis.", slot="pet.cat.name"),
                expected_revision=revision,
                now=clock.now(),
            )
        else:
            store.update_content(
                A,
                target.id,
                expected_revision=revision,
                content="The cat is Otis.",
                now=clock.now(),
            )
        assert store.list_conflicts(A, limit=10) == []
        for parked in (challenger, sibling):
            row = store.get(A, parked.id)
            assert row.lifecycle is Lifecycle.ARCHIVED and row.superseded_by is None
        assert {challenger.id, sibling.id}.isdisjoint(c.id for c in store.list_claims(A))
        clock.advance(1)
        restored = store.restore(A, challenger.id, now=clock.now())
        assert restored.is_recallable
        assert store.list_conflicts(A, limit=10) == []

    @pytest.mark.parametrize("removal", ["delete", "archive"])
    def test_removing_the_last_challenger_clears_the_target(
        self, conflicts_store: ConflictsStore, clock: ManualClock, removal: str
    ) -> None:
        """§7.8: with its only challenger gone the target is an ordinary claim again —
        no open conflict, and a merge (refused while it is challenged) may take it."""
        store = conflicts_store
        target = self._add(store, clock, LUNA)
        twin = self._add(store, clock, "The cat is named Luna.")
        challenger = self._challenge(store, clock, target, MISO)
        request = MergeRequest(
            survivor_id=twin.id,
            survivor_revision=twin.revision,
            retired_id=target.id,
            retired_revision=store.get(A, target.id).revision,
        )
        with pytest.raises(RevisionConflict):
            store.merge_claims(A, request, now=clock.now())
        clock.advance(1)
        if removal == "delete":
            store.delete(A, challenger.id, now=clock.now())
        else:
            store.archive(A, challenger.id, now=clock.now())
        assert store.list_conflicts(A, limit=10) == []
        assert store.get(A, target.id).is_recallable
        clock.advance(1)
        survivor = store.merge_claims(A, request, now=clock.now())
        assert survivor.id == twin.id
