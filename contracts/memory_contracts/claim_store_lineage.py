"""The supersede-and-slot half of `ClaimStoreContract`: where a retired state's interval
ends, reviving a value the user returns to (R-LINEAGE-1, reference §3.2 and §7.8), and the
slot lookup the write path's decision step uses (R-SCOPE-3).

A mixin: it relies on the `claim_store` and `clock` fixtures and the `_add` helper that
`ClaimStoreContract` provides; use it only through that class.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from memory_contracts.claim_store_support import (
    CONTRACT_EPOCH,
    IDENTITY,
    claim_draft,
    state_temporal,
)
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Claim, EmbeddingState, Lifecycle, WriteOrigin
from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.domain.temporal import Interval
from memory_core.ports.claims import ClaimStore, DerivationKind, InsertStatus

__all__ = ["LineageAndSlotCases"]

A, B = "agent-a", "agent-b"
AGENT_ONLY = ScopeFilter.agent_only()
EXTRACTION, USER_ADD = WriteOrigin.EXTRACTION, WriteOrigin.USER_ADD
HOME = "user.home_city"
PARIS, BERLIN = "Lives in Paris", "Lives in Berlin"


def _edges(store: ClaimStore, claim_id: str) -> list[tuple[str, str, DerivationKind]]:
    return [(e.parent_id, e.child_id, e.kind) for e in store.list_derivations(A, claim_id)]


class LineageAndSlotCases:
    _add: Any  # provided by ClaimStoreContract

    def _moved(self, store: ClaimStore, clock: ManualClock) -> tuple[Claim, Claim]:
        """Paris (a state since 60 days ago), then Berlin superseding it 30 days ago."""
        paris = self._add(
            store,
            clock,
            PARIS,
            slot=HOME,
            temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=60)),
        )
        clock.advance(60)
        outcome = store.supersede(
            A,
            paris.id,
            claim_draft(
                BERLIN, slot=HOME, temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=30))
            ),
            expected_revision=paris.revision,
            now=clock.now(),
        )
        assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
        return store.get(A, paris.id), outcome.claim

    # --- closing a state (R-TIME-1) -----------------------------------------------------------
    def test_a_superseded_state_ends_where_its_successor_starts(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-TIME-1, R-LINEAGE-1: a move dated last month ends the old home last month, not
        when the store heard of it."""
        paris, berlin = self._moved(claim_store, clock)
        assert paris.superseded_by == berlin.id
        assert paris.temporal.interval == Interval(
            valid_from=CONTRACT_EPOCH - timedelta(days=60),
            valid_until=CONTRACT_EPOCH - timedelta(days=30),
        )

    @pytest.mark.parametrize("offset_days", [-90, None])
    def test_a_successor_without_a_later_start_ends_the_state_now(
        self, claim_store: ClaimStore, clock: ManualClock, offset_days: int | None
    ) -> None:
        """R-TIME-1: a successor starting before the old state did, or undated, closes the old
        interval at `now` (it can never end before it began)."""
        old = self._add(
            claim_store, clock, PARIS, temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=60))
        )
        clock.advance(3600)
        temporal = (
            state_temporal(CONTRACT_EPOCH + timedelta(days=offset_days)) if offset_days else None
        )
        draft = claim_draft(BERLIN, **({"temporal": temporal} if temporal else {}))
        claim_store.supersede(A, old.id, draft, expected_revision=1, now=clock.now())
        assert claim_store.get(A, old.id).temporal.interval.valid_until == clock.now()

    def test_a_planned_successor_ends_the_state_on_its_first_day(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-TIME-1, R-TIME-3: a move that starts next week ends the current home next week;
        until then evidence retrieval still reads the old state as holding."""
        old = self._add(
            claim_store, clock, PARIS, temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=60))
        )
        starts = CONTRACT_EPOCH + timedelta(days=7)
        claim_store.supersede(
            A,
            old.id,
            claim_draft(BERLIN, temporal=state_temporal(starts)),
            expected_revision=1,
            now=clock.now(),
        )
        assert claim_store.get(A, old.id).temporal.interval.valid_until == starts

    # --- reviving a retired value (R-LINEAGE-1, reference §7.8) -------------------------------
    def test_returning_to_a_retired_value_revives_it_and_retires_the_head(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1: Paris → Berlin → Paris. The retired Paris row becomes live again
        (revision+1, re-embedded, interval re-opened from the new start), Berlin is retired
        in its favour and ends there, and lineage reads both ways."""
        paris, berlin = self._moved(claim_store, clock)
        assert claim_store.mark_embedding(
            A,
            paris.id,
            expected_revision=paris.revision,
            identity=IDENTITY,
            ready=True,
            now=clock.now(),
        )
        clock.advance(3600)
        back = clock.now() - timedelta(days=2)
        outcome = claim_store.supersede(
            A,
            berlin.id,
            claim_draft(PARIS, slot=HOME, temporal=state_temporal(back, confidence=0.7)),
            expected_revision=berlin.revision,
            now=clock.now(),
        )
        assert outcome.status is InsertStatus.REVIVED and outcome.claim is not None
        revived = claim_store.get(A, paris.id)
        assert outcome.claim == revived
        assert revived.is_recallable and revived.superseded_by is None
        assert revived.revision == paris.revision + 1
        assert (revived.embedding_state, revived.embedding) == (EmbeddingState.PENDING, None)
        assert revived.temporal == state_temporal(back, confidence=0.7)
        assert revived.created_at == paris.created_at  # the same row, not a copy
        retired = claim_store.get(A, berlin.id)
        assert retired.superseded_by == paris.id and retired.revision == berlin.revision + 1
        assert retired.temporal.interval.valid_until == back
        assert _edges(claim_store, paris.id) == [
            (paris.id, berlin.id, DerivationKind.SUPERSEDE),
            (berlin.id, paris.id, DerivationKind.SUPERSEDE),
        ]
        hits = claim_store.search_fts(A, ["Lives in"], scope_filter=AGENT_ONLY, limit=5)
        assert [hit.claim_id for hit in hits] == [paris.id]
        assert claim_store.find_live_by_slot(A, Scope.agent(), HOME) == revived
        assert [c.id for c in claim_store.list_pending_embeddings(A, limit=5)] == [paris.id]

    def test_an_undated_return_reopens_a_state_from_now(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1, R-TIME-1: with no date in the new statement the revived state holds
        from the moment it was said, open-ended — never over the Berlin years."""
        paris, berlin = self._moved(claim_store, clock)
        clock.advance(3600)
        outcome = claim_store.supersede(
            A, berlin.id, claim_draft(PARIS), expected_revision=berlin.revision, now=clock.now()
        )
        assert outcome.status is InsertStatus.REVIVED
        temporal = claim_store.get(A, paris.id).temporal
        assert (temporal.kind, temporal.precision, temporal.timezone) == (
            paris.temporal.kind,
            paris.temporal.precision,
            paris.temporal.timezone,
        )
        assert temporal.interval == Interval(valid_from=clock.now())

    def test_a_revival_is_refused_by_a_tombstone_unless_the_user_says_it(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-WRITE-4/5, R-FORGET-1: reviving goes through the tombstone check like an insert
        — the text was forgotten (as another kind) so extraction changes nothing, and an
        explicit user add releases the tombstone and revives, atomically."""
        paris, berlin = self._moved(claim_store, clock)
        twin = self._add(claim_store, clock, PARIS, kind="episodic")
        claim_store.delete(A, twin.id, now=clock.now())
        refused = claim_store.supersede(
            A, berlin.id, claim_draft(PARIS), expected_revision=berlin.revision, now=clock.now()
        )
        assert refused.status is InsertStatus.SUPPRESSED and refused.claim is None
        assert claim_store.get(A, berlin.id) == berlin
        assert claim_store.get(A, paris.id) == paris
        assert _edges(claim_store, berlin.id) == [(paris.id, berlin.id, DerivationKind.SUPERSEDE)]
        allowed = claim_store.supersede(
            A,
            berlin.id,
            claim_draft(PARIS),
            expected_revision=berlin.revision,
            now=clock.now(),
            origin=USER_ADD,
        )
        assert allowed.status is InsertStatus.REVIVED and allowed.released_tombstones >= 1
        assert claim_store.get(A, paris.id).is_recallable
        assert claim_store.get(A, berlin.id).superseded_by == paris.id

    def test_repeating_an_archived_claim_keeps_the_head(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-2: an archived row is the user's recoverable forget; a supersede that
        repeats it neither revives it nor retires the head, and says so (DUPLICATE of a row
        that is not recallable)."""
        paris, berlin = self._moved(claim_store, clock)
        archived = claim_store.archive(A, paris.id, now=clock.now())
        outcome = claim_store.supersede(
            A, berlin.id, claim_draft(PARIS), expected_revision=berlin.revision, now=clock.now()
        )
        assert outcome.status is InsertStatus.DUPLICATE and outcome.claim == archived
        assert archived.lifecycle is Lifecycle.ARCHIVED and not outcome.claim.is_recallable
        assert claim_store.get(A, berlin.id) == berlin
        assert claim_store.get(A, paris.id) == archived

    # --- slot lookup (R-SCOPE-3) --------------------------------------------------------------
    def test_find_live_by_slot_sees_only_live_holders_of_exactly_that_scope(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-3, R-PRIV-2: the live holder of the slot in exactly the asked scope — not a
        retired or archived one, not another scope's or another agent's; the newest when
        several hold it."""
        agent = Scope.agent()
        session = Scope.session("s1")
        assert claim_store.find_live_by_slot(A, agent, HOME) is None
        paris, berlin = self._moved(claim_store, clock)
        in_session = self._add(claim_store, clock, "Lives in Rome", slot=HOME, scope=session)
        self._add(claim_store, clock, "Lives in Oslo", slot=HOME, agent_id=B)
        self._add(claim_store, clock, "Works at Acme", slot="user.employer")
        assert claim_store.find_live_by_slot(A, agent, HOME) == berlin
        assert claim_store.find_live_by_slot(A, session, HOME) == in_session
        assert claim_store.find_live_by_slot(A, Scope.session("s2"), HOME) is None
        assert claim_store.find_live_by_slot(A, Scope.user("s1"), HOME) is None
        assert claim_store.find_live_by_slot(A, agent, "user.diet") is None
        clock.advance(5)
        newer = self._add(claim_store, clock, "Lives in Madrid", slot=HOME)
        assert claim_store.find_live_by_slot(A, agent, HOME) == newer
        claim_store.archive(A, newer.id, now=clock.now())
        assert claim_store.find_live_by_slot(A, agent, HOME) == berlin
        clock.advance(5)
        lyon = self._add(claim_store, clock, "Lives in Lyon", slot=HOME)
        claim_store.supersede(
            A, lyon.id, claim_draft("Lives near Lyon"), expected_revision=1, now=clock.now()
        )
        assert claim_store.find_live_by_slot(A, agent, HOME) == berlin  # Lyon is retired
        assert paris.superseded_by == berlin.id

    def test_find_live_by_slot_is_fenced_by_a_clear_and_names_a_bad_slot(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-3, R-DOM-4: nothing is found while a clear is pending; an empty slot is a
        ValidationError naming `slot`."""
        self._add(claim_store, clock, BERLIN, slot=HOME)
        for bad in ("", "   "):
            with pytest.raises(ValidationError) as caught:
                claim_store.find_live_by_slot(A, Scope.agent(), bad)
            assert caught.value.field == "slot"
        claim_store.begin_clear(A, now=clock.now())
        assert claim_store.find_live_by_slot(A, Scope.agent(), HOME) is None
