"""`WorkingProjectionsContract`: the stored working projection's row — a snapshot is valid
only for the source generation it was stored at; every change to the agent's Agent-scope
projected claims moves the generation and drops the snapshot; a store that lost the race is
refused (R-READ-9, R-MAINT-3, R-STORE-2, reference §8.7)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import A, B, RoleCases, role_fixture
from memory_contracts.claim_store.support import IDENTITY, claim_draft
from memory_contracts.fakes import ManualClock
from memory_core.domain.errors import ClearInProgress, ValidationError
from memory_core.domain.scope import Scope
from memory_core.domain.temporal_policy import TemporalStatus, WorkingSection
from memory_core.ports.claims import (
    ClaimReader,
    ClaimSearch,
    ClaimWriter,
    EmbeddingBookkeeping,
    Forgetting,
    HiddenClaim,
    ProjectionEntry,
    WorkingProjections,
    WorkingSnapshot,
)

__all__ = ["WorkingProjectionsContract", "WorkingProjectionsStore"]


@runtime_checkable
class WorkingProjectionsStore(
    ClaimReader,
    ClaimWriter,
    ClaimSearch,
    EmbeddingBookkeeping,
    Forgetting,
    WorkingProjections,
    Protocol,
):
    """What the contract calls: its role, and the claim writes that must move it."""


def snapshot(clock: ManualClock, text: str = "[Stable preferences and facts]\n- Likes tea") -> Any:
    return WorkingSnapshot(
        text=text,
        entries=(
            ProjectionEntry(
                id="mem-x", section=WorkingSection.STABLE_FACTS, status=TemporalStatus.ATEMPORAL
            ),
        ),
        estimated_tokens=9,
        next_refresh_at=clock.now() + timedelta(days=2, microseconds=7),
        built_at=clock.now(),
        recipe="r" * 64,
        hidden=(HiddenClaim(id="mem-y", kind="semantic"),),  # type: ignore[arg-type]
    )


# Each mutation the projection would show, made on a store holding one Agent-scope claim.
_MUTATIONS: dict[str, Callable[[Any, Any, ManualClock], object]] = {
    "insert": lambda s, c, clock: s.insert(
        claim_draft("Plays the cello"), origin="extraction", now=clock.now()
    ),
    "update_content": lambda s, c, clock: s.update_content(
        A, c.id, expected_revision=c.revision, content="Likes green tea", now=clock.now()
    ),
    "supersede": lambda s, c, clock: s.supersede(
        A, c.id, claim_draft("Likes coffee"), expected_revision=c.revision, now=clock.now()
    ),
    "archive": lambda s, c, clock: s.archive(A, c.id, now=clock.now()),
    "delete": lambda s, c, clock: s.delete(A, c.id, now=clock.now()),
}


class WorkingProjectionsContract(RoleCases):
    """Inherit, implement `make_working_store`; pytest collects the cases."""

    working_store = role_fixture("working_store", "make_working_store", WorkingProjectionsStore)

    def test_a_snapshot_stored_at_the_current_generation_reads_back(
        self, working_store: WorkingProjectionsStore, clock: ManualClock
    ) -> None:
        store = working_store
        assert store.working_projection(A).snapshot is None  # never seen
        self._add(store, clock, "Likes tea")
        generation = store.working_projection(A).generation
        stored = snapshot(clock)
        assert store.store_working_projection(A, stored, generation=generation)
        read = store.working_projection(A)
        assert read.generation == generation and read.snapshot == stored
        assert store.working_projection(B).snapshot is None  # R-STORE-3: per agent

    @pytest.mark.parametrize("mutation", sorted(_MUTATIONS))
    def test_every_change_to_a_projected_claim_moves_the_generation_and_drops_the_snapshot(
        self, working_store: WorkingProjectionsStore, clock: ManualClock, mutation: str
    ) -> None:
        """A stale snapshot is detectable without scanning claims, and a rebuild that read
        the generation before the change is refused, never stored over it."""
        store = working_store
        claim = self._add(store, clock, "Likes tea")
        before = store.working_projection(A).generation
        assert store.store_working_projection(A, snapshot(clock), generation=before)
        clock.advance(1)
        _MUTATIONS[mutation](store, claim, clock)
        after = store.working_projection(A)
        assert after.generation != before and after.snapshot is None
        assert not store.store_working_projection(A, snapshot(clock), generation=before)
        assert store.working_projection(A).snapshot is None
        assert store.store_working_projection(A, snapshot(clock), generation=after.generation)

    def test_restore_moves_the_generation(
        self, working_store: WorkingProjectionsStore, clock: ManualClock
    ) -> None:
        store = working_store
        claim = self._add(store, clock, "Likes tea")
        store.archive(A, claim.id, now=clock.now())
        generation = store.working_projection(A).generation
        assert store.store_working_projection(A, snapshot(clock), generation=generation)
        store.restore(A, claim.id, now=clock.now())
        assert store.working_projection(A).snapshot is None

    def test_turn_bookkeeping_and_other_scopes_leave_the_snapshot_alone(
        self, working_store: WorkingProjectionsStore, clock: ManualClock
    ) -> None:
        """Access counts (every turn writes them) and embedding marks do not make it stale;
        nor does a Session-scope claim or another agent's write."""
        store = working_store
        claim = self._add(store, clock, "Likes tea")
        generation = store.working_projection(A).generation
        stored = snapshot(clock)
        assert store.store_working_projection(A, stored, generation=generation)
        store.record_access(A, [claim.id], now=clock.now())
        self._ready(store, clock, claim, IDENTITY)
        self._add(store, clock, "Asked about trains", scope=Scope.session("s-1"))
        self._add(store, clock, "Likes tea", agent_id=B)
        assert store.working_projection(A).snapshot == stored

    def test_a_clear_fences_the_row_and_leaves_no_snapshot(
        self, working_store: WorkingProjectionsStore, clock: ManualClock
    ) -> None:
        """R-FORGET-3: no read while the clear runs, no store; afterwards nothing of the
        cleared claims is left to show."""
        store = working_store
        self._add(store, clock, "Likes tea")
        generation = store.working_projection(A).generation
        assert store.store_working_projection(A, snapshot(clock), generation=generation)
        store.begin_clear(A, now=clock.now())
        fenced = store.working_projection(A)
        assert fenced.snapshot is None
        with pytest.raises(ClearInProgress):
            store.store_working_projection(A, snapshot(clock), generation=fenced.generation)
        while store.run_clear_batch(A).phase.value == "claims":
            pass
        store.finish_clear(A)
        after = store.working_projection(A)
        assert after.snapshot is None
        assert not store.store_working_projection(A, snapshot(clock), generation=generation)

    def test_retirement_leaves_no_row_a_late_rebuild_could_revive(
        self, working_store: WorkingProjectionsStore, clock: ManualClock
    ) -> None:
        store = working_store
        self._add(store, clock, "Likes tea")
        generation = store.working_projection(A).generation
        store.retire_agent(A)
        assert not store.store_working_projection(A, snapshot(clock), generation=generation)
        assert store.working_projection(A).snapshot is None

    @pytest.mark.parametrize(
        ("agent_id", "generation", "field"),
        [(" agent-a", 0, "agent_id"), (A, -1, "generation"), (A, True, "generation")],
    )
    def test_a_malformed_store_is_refused_by_name(
        self,
        working_store: WorkingProjectionsStore,
        clock: ManualClock,
        agent_id: str,
        generation: int,
        field: str,
    ) -> None:
        with pytest.raises(ValidationError) as caught:
            working_store.store_working_projection(agent_id, snapshot(clock), generation=generation)
        assert caught.value.field == field
        with pytest.raises(ValidationError):
            working_store.store_working_projection(A, "text", generation=0)  # type: ignore[arg-type]
