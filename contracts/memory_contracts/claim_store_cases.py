"""The trust-plane and namespace half of `ClaimStoreContract`: directives (R-DIR-1..3),
agent clear (R-FORGET-3), retirement (R-FORGET-4) and repair of a valid store.

A mixin: it relies on the `claim_store` and `clock` fixtures and the `_add` helper that
`ClaimStoreContract` provides; use it only through that class.
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_contracts.claim_store_support import (
    CONTRACT_EPOCH,
    IDENTITY,
    claim_draft,
    state_temporal,
)
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import WriteOrigin
from memory_core.domain.directives import DirectiveKind, DirectiveSource, DirectiveStatus
from memory_core.domain.errors import (
    ClearInProgress,
    DirectiveCapacityExceeded,
    NotFound,
    StoreError,
    ValidationError,
)
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.ports.claims import ClaimStore, ClearPhase, InsertStatus

__all__ = ["TrustPlaneAndClearCases"]

A, B = "agent-a", "agent-b"
AGENT_ONLY = ScopeFilter.agent_only()
EXTRACTION, USER_ADD = WriteOrigin.EXTRACTION, WriteOrigin.USER_ADD


class TrustPlaneAndClearCases:
    _add: Any  # provided by ClaimStoreContract

    # --- directives (R-DIR-1..3) -----------------------------------------------------------
    def test_directives_are_ordered_by_update_time_then_id(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-DIR-3: updated_at DESC, id ASC — also for equal times."""
        first = claim_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "Be brief", now=clock.now()
        )
        second = claim_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "Use metric", now=clock.now()
        )
        clock.advance(5)
        third = claim_store.create_directive(
            A,
            DirectiveKind.SUPPRESS_TOPIC,
            "Never bring up football",
            topic="football",
            now=clock.now(),
        )
        listed = [d.id for d in claim_store.list_directives(A)]
        assert listed == [third.id, *sorted([first.id, second.id])]
        clock.advance(5)
        again = claim_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "be  BRIEF", now=clock.now()
        )
        assert again.id == first.id and again.content == "be  BRIEF"
        assert claim_store.list_directives(A)[0].id == first.id
        assert third.topic == "football" and third.status is DirectiveStatus.ACTIVE

    def test_suggestions_are_drafts_that_only_approval_activates(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-DIR-1: suggestion = draft, insert-if-absent; rejected stays rejected; only
        draft→active and draft→rejected are allowed."""
        draft = claim_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "Reply in German", now=clock.now()
        )
        assert draft is not None and draft.status is DirectiveStatus.DRAFT
        assert draft.source is DirectiveSource.DERIVED_SUGGESTION
        rejected = claim_store.set_directive_status(
            A, draft.id, DirectiveStatus.REJECTED, now=clock.now()
        )
        assert rejected.status is DirectiveStatus.REJECTED
        assert (
            claim_store.suggest_directive(
                A, DirectiveKind.INSTRUCTION, "reply in german", now=clock.now()
            )
            is None
        )
        assert claim_store.list_directives(A)[0].status is DirectiveStatus.REJECTED
        for status in (DirectiveStatus.ACTIVE, DirectiveStatus.DRAFT):
            with pytest.raises(ValidationError):
                claim_store.set_directive_status(A, draft.id, status, now=clock.now())
        other = claim_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "Cite sources", now=clock.now()
        )
        assert other is not None
        active = claim_store.set_directive_status(
            A, other.id, DirectiveStatus.ACTIVE, now=clock.now()
        )
        assert active.status is DirectiveStatus.ACTIVE
        with pytest.raises(ValidationError):
            claim_store.set_directive_status(A, other.id, DirectiveStatus.REJECTED, now=clock.now())
        assert [d.id for d in claim_store.list_directives(A, status=DirectiveStatus.ACTIVE)] == [
            other.id
        ]

    def test_active_directives_are_capped_at_sixty_four(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-DIR-1: the 65th activation — create or approve — is a typed capacity error."""
        for i in range(64):
            claim_store.create_directive(A, DirectiveKind.INSTRUCTION, f"rule {i}", now=clock.now())
        with pytest.raises(DirectiveCapacityExceeded):
            claim_store.create_directive(A, DirectiveKind.INSTRUCTION, "rule 64", now=clock.now())
        draft = claim_store.suggest_directive(
            A, DirectiveKind.INSTRUCTION, "rule 65", now=clock.now()
        )
        assert draft is not None
        with pytest.raises(DirectiveCapacityExceeded):
            claim_store.set_directive_status(A, draft.id, DirectiveStatus.ACTIVE, now=clock.now())
        claim_store.create_directive(
            A, DirectiveKind.INSTRUCTION, "rule 3", now=clock.now()
        )  # upsert
        claim_store.create_directive(B, DirectiveKind.INSTRUCTION, "rule 64", now=clock.now())

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
        self, claim_store: ClaimStore, clock: ManualClock, kind: DirectiveKind, topic: str | None
    ) -> None:
        """R-DIR-2: over-broad, missing or stray topics are refused on write, naming `topic`."""
        for write in (claim_store.create_directive, claim_store.suggest_directive):
            with pytest.raises(ValidationError) as caught:
                write(A, kind, "some directive text", topic=topic, now=clock.now())
            assert caught.value.field == "topic"
        assert claim_store.list_directives(A) == []

    # --- clear and retirement (R-FORGET-3, R-FORGET-4) -------------------------------------
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

    def test_repair_leaves_a_valid_store_untouched(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-TIME-4, R-SCOPE-4: startup repair never alters a valid row."""
        rows = [
            self._add(claim_store, clock, "plain fact"),
            self._add(claim_store, clock, "timed", temporal=state_temporal(CONTRACT_EPOCH)),
            self._add(claim_store, clock, "user scoped", scope=Scope.user("u1")),
        ]
        report = claim_store.repair(now=clock.now())
        assert (report.temporal_archived, report.scope_fixed, report.scope_deleted) == (0, 0, 0)
        assert [claim_store.get(A, row.id) for row in rows] == rows

    def test_a_closed_store_refuses_every_call(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-STORE-1: close is idempotent; later calls raise the typed StoreError."""
        claim = self._add(claim_store, clock, "before close")
        claim_store.close()
        claim_store.close()
        with pytest.raises(StoreError):
            claim_store.get(A, claim.id)
        with pytest.raises(StoreError):
            claim_store.insert(claim_draft("after close"), origin=EXTRACTION, now=clock.now())
        with pytest.raises(StoreError):
            claim_store.checkpoint()
