"""`LineageContract`: supersede and manual edit with their lineage (`ClaimWriter` and
`LineageReader`) — CAS on the revision, where a retired state ends, keeping an archived
head, and the slot lookup the decision step uses (R-LINEAGE-1, R-TIME-1, R-SCOPE-3)."""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import BERLIN, HOME, PARIS, A, B, RoleCases, role_fixture
from memory_contracts.claim_store.support import CONTRACT_EPOCH, claim_draft, state_temporal
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import EmbeddingState, Lifecycle
from memory_core.domain.errors import RevisionConflict, ScopeError, ValidationError
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import Interval
from memory_core.ports.claims import (
    ClaimReader,
    ClaimWriter,
    DerivationKind,
    InsertStatus,
    LineageReader,
)

__all__ = ["LineageContract", "LineageStore"]


@runtime_checkable
class LineageStore(ClaimReader, ClaimWriter, LineageReader, Protocol):
    """What the contract calls: its role, and the claim records that set cases up."""


class LineageContract(RoleCases):
    """Inherit, implement `make_lineage_store`; pytest collects the cases."""

    lineage_store = role_fixture("lineage_store", "make_lineage_store", LineageStore)

    def test_manual_edit_is_compare_and_set_on_the_revision(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1: a stale revision loses; a new text supersedes with a manual_edit edge."""
        claim = self._add(lineage_store, clock, "Meeting on Monday")
        clock.advance(60)
        with pytest.raises(RevisionConflict):
            lineage_store.update_content(
                A, claim.id, expected_revision=7, content="x", now=clock.now()
            )
        edited = lineage_store.update_content(
            A, claim.id, expected_revision=1, content="Meeting on Tuesday", now=clock.now()
        )
        assert edited.id != claim.id and edited.content == "Meeting on Tuesday"
        assert edited.embedding_state is EmbeddingState.PENDING
        old = lineage_store.get(A, claim.id)
        assert old.superseded_by == edited.id and old.revision == 2
        edges = lineage_store.list_derivations(A, edited.id)
        assert [(e.parent_id, e.child_id, e.kind) for e in edges] == [
            (claim.id, edited.id, DerivationKind.MANUAL_EDIT)
        ]
        with pytest.raises(RevisionConflict):
            lineage_store.update_content(
                A, claim.id, expected_revision=1, content="y", now=clock.now()
            )
        same = lineage_store.update_content(
            A, edited.id, expected_revision=1, content="Meeting  on Tuesday ", now=clock.now()
        )
        assert same.id == edited.id and same.revision == 2

    def test_supersede_stays_in_scope_closes_the_state_and_records_lineage(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-3, R-LINEAGE-1, R-TIME-1: same scope only; a state's interval ends now."""
        started = CONTRACT_EPOCH - timedelta(days=30)
        old = self._add(lineage_store, clock, "Lives in Hamburg", temporal=state_temporal(started))
        clock.advance(3600)
        with pytest.raises(ScopeError):
            lineage_store.supersede(
                A,
                old.id,
                claim_draft("Lives in Bremen", scope=Scope.session("s1")),
                expected_revision=1,
                now=clock.now(),
            )
        with pytest.raises(RevisionConflict):
            lineage_store.supersede(
                A, old.id, claim_draft("Lives in Bremen"), expected_revision=2, now=clock.now()
            )
        outcome = lineage_store.supersede(
            A,
            old.id,
            claim_draft("Lives in Bremen", temporal=state_temporal(clock.now())),
            expected_revision=1,
            now=clock.now(),
        )
        assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
        retired = lineage_store.get(A, old.id)
        assert retired.superseded_by == outcome.claim.id
        assert retired.temporal.interval.valid_until == clock.now()
        assert [
            (e.parent_id, e.kind) for e in lineage_store.list_derivations(A, outcome.claim.id)
        ] == [(old.id, DerivationKind.SUPERSEDE)]

    def test_a_superseded_state_ends_where_its_successor_starts(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-TIME-1, R-LINEAGE-1: a move dated last month ends the old home last month, not
        when the store heard of it."""
        paris, berlin = self._moved(lineage_store, clock)
        assert paris.superseded_by == berlin.id
        assert paris.temporal.interval == Interval(
            valid_from=CONTRACT_EPOCH - timedelta(days=60),
            valid_until=CONTRACT_EPOCH - timedelta(days=30),
        )

    @pytest.mark.parametrize("offset_days", [-90, None])
    def test_a_successor_without_a_later_start_ends_the_state_now(
        self, lineage_store: LineageStore, clock: ManualClock, offset_days: int | None
    ) -> None:
        """R-TIME-1: a successor starting before the old state did, or undated, closes the old
        interval at `now` (it can never end before it began)."""
        old = self._add(
            lineage_store,
            clock,
            PARIS,
            temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=60)),
        )
        clock.advance(3600)
        temporal = (
            state_temporal(CONTRACT_EPOCH + timedelta(days=offset_days)) if offset_days else None
        )
        draft = claim_draft(BERLIN, **({"temporal": temporal} if temporal else {}))
        lineage_store.supersede(A, old.id, draft, expected_revision=1, now=clock.now())
        assert lineage_store.get(A, old.id).temporal.interval.valid_until == clock.now()

    def test_a_planned_successor_ends_the_state_on_its_first_day(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-TIME-1, R-TIME-3: a move that starts next week ends the current home next week;
        until then evidence retrieval still reads the old state as holding."""
        old = self._add(
            lineage_store,
            clock,
            PARIS,
            temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=60)),
        )
        starts = CONTRACT_EPOCH + timedelta(days=7)
        lineage_store.supersede(
            A,
            old.id,
            claim_draft(BERLIN, temporal=state_temporal(starts)),
            expected_revision=1,
            now=clock.now(),
        )
        assert lineage_store.get(A, old.id).temporal.interval.valid_until == starts

    def test_an_undated_return_reopens_a_state_from_now(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1, R-TIME-1: with no date in the new statement the revived state holds
        from the moment it was said, open-ended — never over the Berlin years."""
        paris, berlin = self._moved(lineage_store, clock)
        clock.advance(3600)
        outcome = lineage_store.supersede(
            A, berlin.id, claim_draft(PARIS), expected_revision=berlin.revision, now=clock.now()
        )
        assert outcome.status is InsertStatus.REVIVED
        temporal = lineage_store.get(A, paris.id).temporal
        assert (temporal.kind, temporal.precision, temporal.timezone) == (
            paris.temporal.kind,
            paris.temporal.precision,
            paris.temporal.timezone,
        )
        assert temporal.interval == Interval(valid_from=clock.now())

    def test_repeating_an_archived_claim_keeps_the_head(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-FORGET-2: an archived row is the user's recoverable forget; a supersede that
        repeats it neither revives it nor retires the head, and says so (DUPLICATE of a row
        that is not recallable)."""
        paris, berlin = self._moved(lineage_store, clock)
        archived = lineage_store.archive(A, paris.id, now=clock.now())
        outcome = lineage_store.supersede(
            A, berlin.id, claim_draft(PARIS), expected_revision=berlin.revision, now=clock.now()
        )
        assert outcome.status is InsertStatus.DUPLICATE and outcome.claim == archived
        assert archived.lifecycle is Lifecycle.ARCHIVED and not outcome.claim.is_recallable
        assert lineage_store.get(A, berlin.id) == berlin
        assert lineage_store.get(A, paris.id) == archived

    def test_find_live_by_slot_sees_only_live_holders_of_exactly_that_scope(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-3, R-PRIV-2: the live holder of the slot in exactly the asked scope — not a
        retired or archived one, not another scope's or another agent's; the newest when
        several hold it."""
        agent = Scope.agent()
        session = Scope.session("s1")
        assert lineage_store.find_live_by_slot(A, agent, HOME) is None
        paris, berlin = self._moved(lineage_store, clock)
        in_session = self._add(lineage_store, clock, "Lives in Rome", slot=HOME, scope=session)
        self._add(lineage_store, clock, "Lives in Oslo", slot=HOME, agent_id=B)
        self._add(lineage_store, clock, "Works at Acme", slot="user.employer")
        assert lineage_store.find_live_by_slot(A, agent, HOME) == berlin
        assert lineage_store.find_live_by_slot(A, session, HOME) == in_session
        assert lineage_store.find_live_by_slot(A, Scope.session("s2"), HOME) is None
        assert lineage_store.find_live_by_slot(A, Scope.user("s1"), HOME) is None
        assert lineage_store.find_live_by_slot(A, agent, "user.diet") is None
        clock.advance(5)
        newer = self._add(lineage_store, clock, "Lives in Madrid", slot=HOME)
        assert lineage_store.find_live_by_slot(A, agent, HOME) == newer
        lineage_store.archive(A, newer.id, now=clock.now())
        assert lineage_store.find_live_by_slot(A, agent, HOME) == berlin
        clock.advance(5)
        lyon = self._add(lineage_store, clock, "Lives in Lyon", slot=HOME)
        lineage_store.supersede(
            A, lyon.id, claim_draft("Lives near Lyon"), expected_revision=1, now=clock.now()
        )
        assert lineage_store.find_live_by_slot(A, agent, HOME) == berlin  # Lyon is retired
        assert paris.superseded_by == berlin.id

    def test_find_live_by_slot_names_a_bad_slot(
        self, lineage_store: LineageStore, clock: ManualClock
    ) -> None:
        """R-DOM-4: an empty slot is a ValidationError naming `slot`."""
        self._add(lineage_store, clock, BERLIN, slot=HOME)
        for bad in ("", "   "):
            with pytest.raises(ValidationError) as caught:
                lineage_store.find_live_by_slot(A, Scope.agent(), bad)
            assert caught.value.field == "slot"
