"""Cases that need the whole store: one namespace across every role — isolation,
the clear fence, retirement, internal rows, revival through tombstones, and
re-validation after an edit. They run in `ClaimStoreContract` only."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_contracts.claim_store.base import (
    AGENT_ONLY,
    EXTRACTION,
    HOME,
    PARIS,
    USER_ADD,
    A,
    B,
    RoleCases,
)
from memory_contracts.claim_store.support import IDENTITY, claim_draft, state_temporal
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import EmbeddingIdentity, EmbeddingState
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.errors import ClearInProgress, NotFound, ValidationError
from memory_core.domain.scope import Scope
from memory_core.ports.claims import ClaimStore, ClearPhase, DerivationKind, InsertStatus

__all__ = ["CrossRoleCases"]


class CrossRoleCases(RoleCases):
    """Mixed into `ClaimStoreContract`, which provides the `claim_store` fixture."""

    def test_internal_rows_are_never_listed_embedded_or_searched(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-DOM-1: persona/working rows are internal: not_applicable, never recallable."""
        persona = self._add(claim_store, clock, "I am a careful assistant", kind="persona")
        assert persona.embedding_state is EmbeddingState.NOT_APPLICABLE
        assert claim_store.list_claims(A, include_inactive=True) == []
        assert claim_store.search_fts(A, ["careful"], scope_filter=AGENT_ONLY, limit=5) == []
        assert claim_store.list_pending_embeddings(A, limit=10) == []

    def test_another_agents_ids_behave_like_unknown_ids_everywhere(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-PRIV-2: every operation with B's id on A's row is NotFound or empty, and A's row
        is untouched afterwards."""
        claim = self._add(claim_store, clock, "A private fact of agent A")
        directive = claim_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "Answer tersely", now=clock.now()
        )
        assert directive is not None
        now, cid = clock.now(), claim.id
        for call in (
            lambda: claim_store.get(B, cid),
            lambda: claim_store.archive(B, cid, now=now),
            lambda: claim_store.restore(B, cid, now=now),
            lambda: claim_store.delete(B, cid, now=now),
            lambda: claim_store.update_content(B, cid, expected_revision=1, content="x", now=now),
            lambda: claim_store.supersede(
                B, cid, claim_draft("y", agent_id=B), expected_revision=1, now=now
            ),
            lambda: claim_store.set_directive_status(
                B, directive.id, DirectiveStatus.ACTIVE, now=now
            ),
        ):
            with pytest.raises(NotFound):
                call()
        assert claim_store.list_applicable_by_ids(B, [cid], scope_filter=AGENT_ONLY) == []
        assert claim_store.record_access(B, [cid], now=now) == 0
        assert not claim_store.mark_embedding(
            B, cid, expected_revision=1, identity=IDENTITY, ready=True, now=now
        )
        assert claim_store.search_fts(B, ["private"], scope_filter=AGENT_ONLY, limit=10) == []
        assert claim_store.list_claims(B, include_inactive=True) == []
        assert claim_store.list_directives(B) == []
        assert claim_store.list_pending_embeddings(B, limit=10) == []
        assert claim_store.get(A, cid) == claim
        assert claim_store.list_directives(A)[0].status is DirectiveStatus.DRAFT

    def test_fts_excludes_rows_that_are_not_recallable(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-READ-3, R-FORGET-2: archived, superseded and deleted rows leave the mirror."""
        archived = self._add(claim_store, clock, "tea archived")
        deleted = self._add(claim_store, clock, "tea deleted")
        old = self._add(claim_store, clock, "tea old version")
        live = self._add(claim_store, clock, "tea live")
        claim_store.archive(A, archived.id, now=clock.now())
        claim_store.delete(A, deleted.id, now=clock.now())
        outcome = claim_store.supersede(
            A, old.id, claim_draft("tea new version"), expected_revision=1, now=clock.now()
        )
        assert outcome.claim is not None
        found = set(
            self._ids(claim_store.search_fts(A, ["tea"], scope_filter=AGENT_ONLY, limit=10))
        )
        assert found == {live.id, outcome.claim.id}

    def test_embedding_state_is_compare_and_set_and_revalidated(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-READ-3, R-WRITE-6: stale embeddings never mark a newer text ready; re-validation
        checks identity and revision."""
        claim = self._add(claim_store, clock, "Runs marathons")
        assert [c.id for c in claim_store.list_pending_embeddings(A, limit=5)] == [claim.id]
        assert claim_store.mark_embedding(
            A, claim.id, expected_revision=1, identity=IDENTITY, ready=True, now=clock.now()
        )
        assert claim_store.list_pending_embeddings(A, limit=5) == []
        ok = claim_store.list_applicable_by_ids(
            A,
            [claim.id, "mem-unknown"],
            scope_filter=AGENT_ONLY,
            embedding=IDENTITY,
            revisions={claim.id: 1},
        )
        assert [c.id for c in ok] == [claim.id]
        other = EmbeddingIdentity(provider="contract", model="m2", dim=8)
        assert (
            claim_store.list_applicable_by_ids(
                A, [claim.id], scope_filter=AGENT_ONLY, embedding=other
            )
            == []
        )
        assert (
            claim_store.list_applicable_by_ids(
                A, [claim.id], scope_filter=AGENT_ONLY, revisions={claim.id: 2}
            )
            == []
        )
        claim_store.update_content(
            A, claim.id, expected_revision=1, content="Runs  marathons", now=clock.now()
        )
        assert not claim_store.mark_embedding(
            A, claim.id, expected_revision=1, identity=IDENTITY, ready=True, now=clock.now()
        )

    def test_clear_fences_the_agent_until_it_finishes(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-3: while a job exists reads are empty and writes raise ClearInProgress;
        directives and other agents are untouched; the finished clear suppresses replay."""
        claims = [self._add(claim_store, clock, f"cleared fact {i}") for i in range(5)]
        persona = self._add(claim_store, clock, "persona text", kind="persona")
        bystander = self._add(claim_store, clock, "cleared fact 0", agent_id=B)
        claim_store.create_directive(A, DirectiveKind.INSTRUCTION, "Stay polite", now=clock.now())
        first = claim_store.begin_clear(A, now=clock.now())
        assert claim_store.begin_clear(A, now=clock.now()) == first  # idempotent
        assert [job.agent_id for job in claim_store.pending_clears()] == [A]
        cid, now = claims[0].id, clock.now()
        with pytest.raises(NotFound):
            claim_store.get(A, cid)
        assert claim_store.list_claims(A, include_inactive=True) == []
        assert claim_store.search_fts(A, ["cleared"], scope_filter=AGENT_ONLY, limit=9) == []
        assert claim_store.list_applicable_by_ids(A, [cid], scope_filter=AGENT_ONLY) == []
        assert claim_store.list_pending_embeddings(A, limit=9) == []
        assert claim_store.record_access(A, [cid], now=now) == 0
        assert not claim_store.mark_embedding(
            A, cid, expected_revision=1, identity=IDENTITY, ready=True, now=now
        )
        for call in (
            lambda: claim_store.insert(claim_draft("new fact"), origin=USER_ADD, now=now),
            lambda: claim_store.archive(A, cid, now=now),
            lambda: claim_store.delete(A, cid, now=now),
            lambda: claim_store.update_content(A, cid, expected_revision=1, content="x", now=now),
        ):
            with pytest.raises(ClearInProgress):
                call()
        assert [d.content for d in claim_store.list_directives(A)] == ["Stay polite"]
        with pytest.raises(ValidationError):
            claim_store.finish_clear(A)
        progress = claim_store.run_clear_batch(A, batch_size=4)
        assert (progress.phase, progress.removed_count) == (ClearPhase.CLAIMS, 4)
        progress = claim_store.run_clear_batch(A, batch_size=4)
        assert (progress.phase, progress.removed_count) == (ClearPhase.VECTORS, 6)
        claim_store.finish_clear(A)
        assert claim_store.pending_clears() == []
        assert claim_store.list_claims(A, include_inactive=True) == []
        with pytest.raises(NotFound):
            claim_store.get(A, persona.id)
        replay = claim_store.insert(
            claim_draft("cleared fact 3"), origin=EXTRACTION, now=clock.now()
        )
        assert replay.status is InsertStatus.SUPPRESSED
        self._add(claim_store, clock, "a fact after the clear")
        assert claim_store.get(B, bystander.id) == bystander
        assert [d.content for d in claim_store.list_directives(A)] == ["Stay polite"]

    def test_checkpoint_after_forgetting_keeps_every_other_row(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-PRIV-3: the forensic checkpoint after a delete and a clear is idempotent and
        changes nothing a reader can see — other rows, their search, the suppression."""
        kept = self._add(claim_store, clock, "kept orchard note")
        gone = self._add(claim_store, clock, "forgotten orchard note")
        other = self._add(claim_store, clock, "orchard note of agent b", agent_id=B)
        claim_store.delete(A, gone.id, now=clock.now())
        claim_store.checkpoint()
        claim_store.checkpoint()
        assert claim_store.get(A, kept.id) == kept
        hits = claim_store.search_fts(A, ["orchard"], scope_filter=AGENT_ONLY, limit=5)
        assert [hit.claim_id for hit in hits] == [kept.id]
        claim_store.begin_clear(B, now=clock.now())
        while claim_store.run_clear_batch(B).phase is ClearPhase.CLAIMS:
            pass
        claim_store.finish_clear(B)
        claim_store.checkpoint()
        assert claim_store.list_claims(B, include_inactive=True) == []
        assert claim_store.get(A, kept.id) == kept
        replay = claim_store.insert(
            claim_draft("forgotten orchard note"), origin=EXTRACTION, now=clock.now()
        )
        assert replay.status is InsertStatus.SUPPRESSED
        with pytest.raises(NotFound):
            claim_store.get(B, other.id)

    def test_retirement_removes_the_whole_namespace(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-4: claims, directives, tombstones and lineage of the agent go; others stay."""
        old = self._add(claim_store, clock, "retired fact")
        claim_store.supersede(
            A, old.id, claim_draft("retired fact v2"), expected_revision=1, now=clock.now()
        )
        gone = self._add(claim_store, clock, "forgotten fact")
        claim_store.delete(A, gone.id, now=clock.now())
        claim_store.create_directive(A, DirectiveKind.INSTRUCTION, "Be nice", now=clock.now())
        keep = self._add(claim_store, clock, "retired fact", agent_id=B)
        claim_store.retire_agent(A)
        assert claim_store.list_claims(A, include_inactive=True) == []
        assert claim_store.list_directives(A) == []
        assert claim_store.list_derivations(A, old.id) == []
        self._add(claim_store, clock, "forgotten fact")  # its tombstone went with the namespace
        assert claim_store.get(B, keep.id) == keep

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
        assert self._edges(claim_store, paris.id) == [
            (paris.id, berlin.id, DerivationKind.SUPERSEDE),
            (berlin.id, paris.id, DerivationKind.SUPERSEDE),
        ]
        hits = claim_store.search_fts(A, ["Lives in"], scope_filter=AGENT_ONLY, limit=5)
        assert [hit.claim_id for hit in hits] == [paris.id]
        assert claim_store.find_live_by_slot(A, Scope.agent(), HOME) == revived
        assert [c.id for c in claim_store.list_pending_embeddings(A, limit=5)] == [paris.id]

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
        assert self._edges(claim_store, berlin.id) == [
            (paris.id, berlin.id, DerivationKind.SUPERSEDE)
        ]
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
