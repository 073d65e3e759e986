"""`ClaimSearchContract`: the `ClaimSearch` role — owner and scope predicates before LIMIT,
literal terms, tie-breaks, re-validation by scope, access accounting (R-READ-3, R-READ-8,
R-SCOPE-1)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory_contracts.claim_store.base import AGENT_ONLY, EXTRACTION, A, B, RoleCases, role_fixture
from memory_contracts.claim_store.support import claim_draft
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import EmbeddingState, Lifecycle
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.ports.claims import ClaimReader, ClaimSearch, ClaimWriter, InsertStatus, MatchMode

__all__ = ["ClaimSearchContract", "SearchStore"]


@runtime_checkable
class SearchStore(ClaimReader, ClaimWriter, ClaimSearch, Protocol):
    """What the contract calls: its role, and the claim records that set cases up."""


class ClaimSearchContract(RoleCases):
    """Inherit, implement `make_search_store`; pytest collects the cases."""

    search_store = role_fixture("search_store", "make_search_store", SearchStore)

    def test_fts_applies_the_owner_predicate_before_limit(
        self, search_store: SearchStore, clock: ManualClock
    ) -> None:
        """R-READ-3: B's many better-ranked matches never crowd A's rows out of a small LIMIT."""
        search_store.insert_many(
            [
                claim_draft(f"coffee coffee coffee {i}", agent_id=B, importance=1.0)
                for i in range(150)
            ],
            origin=EXTRACTION,
            now=clock.now(),
        )
        mine = {
            self._add(
                search_store, clock, f"Has coffee with colleague number {i}", importance=0.1
            ).id
            for i in range(3)
        }
        hits = search_store.search_fts(A, ["coffee"], scope_filter=AGENT_ONLY, limit=3)
        assert set(self._ids(hits)) == mine
        b_hits = search_store.search_fts(B, ["coffee"], scope_filter=AGENT_ONLY, limit=5)
        assert len(b_hits) == 5 and not set(self._ids(b_hits)) & mine

    def test_narrow_scopes_are_visible_only_with_their_context(
        self, search_store: SearchStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-1: missing or blank narrow context never widens; each session sees its own."""
        agent_row = self._add(search_store, clock, "Project uses Python")
        s1 = self._add(
            search_store, clock, "Python debugging in session one", scope=Scope.session("s1")
        )
        s2 = self._add(
            search_store, clock, "Python packaging in session two", scope=Scope.session("s2")
        )
        u1 = self._add(search_store, clock, "Python style of user one", scope=Scope.user("u1"))
        everyone = [agent_row.id, s1.id, s2.id, u1.id]

        def visible(context: ScopeContext | None) -> set[str]:
            scope_filter = ScopeFilter.from_context(context)
            found = set(
                self._ids(
                    search_store.search_fts(A, ["Python"], scope_filter=scope_filter, limit=10)
                )
            )
            applicable = {
                c.id
                for c in search_store.list_applicable_by_ids(A, everyone, scope_filter=scope_filter)
            }
            listed = {c.id for c in search_store.list_claims(A, scope_filter=scope_filter)}
            assert found == applicable == listed
            return found

        assert visible(None) == {agent_row.id}
        assert visible(ScopeContext(session_id="   ")) == {agent_row.id}
        assert visible(ScopeContext(session_id="s1")) == {agent_row.id, s1.id}
        assert visible(ScopeContext(session_id="s2", user_id="u1")) == {agent_row.id, s2.id, u1.id}
        assert {c.id for c in search_store.list_claims(A)} == set(everyone)

    def test_fts_matches_substrings_short_terms_and_never_parses_query_syntax(
        self, search_store: SearchStore, clock: ManualClock
    ) -> None:
        """R-READ-3: ≥3-code-point terms are lexical; shorter terms (a 2-character CJK word,
        "Go") use the escaped fallback; quotes, wildcards and operators are literal text."""
        go = self._add(search_store, clock, "Writes services in Go")
        beijing = self._add(search_store, clock, "下个月去北京出差")
        percent = self._add(search_store, clock, "Is 100% sure about NEAR(x) syntax")
        self._add(search_store, clock, "Enjoys long walks")

        def search(*terms: str, mode: MatchMode = MatchMode.ANY) -> list[str]:
            hits = search_store.search_fts(
                A, list(terms), scope_filter=AGENT_ONLY, limit=10, match_mode=mode
            )
            return self._ids(hits)

        assert search("services") == [go.id]
        assert search("ervice") == [go.id]  # substring
        assert search("Go") == [go.id]
        assert search("北京") == [beijing.id]
        assert search("%") == [percent.id]
        assert search("_") == []
        assert search("NEAR(x)") == [percent.id]
        assert search('" OR "') == []
        assert search("walks", "services", mode=MatchMode.ALL) == []
        assert sorted(search("walks", "services")) == sorted([go.id, *search("walks")])
        assert search("", "  ") == []

    def test_fts_breaks_rank_ties_by_importance(
        self, search_store: SearchStore, clock: ManualClock
    ) -> None:
        """R-READ-3: equal lexical rank → higher importance first."""
        low = self._add(search_store, clock, "Drinks oolong daily", importance=0.2)
        high = self._add(
            search_store, clock, "Drinks oolong daily", scope=Scope.session("s9"), importance=0.9
        )
        scope_filter = ScopeFilter.from_context(ScopeContext(session_id="s9"))
        hits = search_store.search_fts(A, ["oolong"], scope_filter=scope_filter, limit=5)
        assert self._ids(hits) == [high.id, low.id]

    def test_a_hit_carries_nothing_or_its_authoritative_row(
        self, search_store: SearchStore, clock: ManualClock
    ) -> None:
        """R-READ-3: a store may hand back a hit's row with it (`FtsHit.claim`) so the turn
        does not read it again; then it is the row re-validation reads at that moment —
        after an edit, an access count and an archive too, never a stale one."""
        scope_filter = ScopeFilter.from_context(ScopeContext(session_id="s1"))
        edited = self._add(search_store, clock, "Keeps bees on the roof")
        counted = self._add(
            search_store, clock, "Keeps bees in the garden", scope=Scope.session("s1")
        )
        archived = self._add(search_store, clock, "Keeps bees at the allotment")

        def carried() -> dict[str, object]:
            hits = search_store.search_fts(A, ["bees"], scope_filter=scope_filter, limit=10)
            ids = self._ids(hits)
            rows = {
                c.id: c
                for c in search_store.list_applicable_by_ids(A, ids, scope_filter=scope_filter)
            }
            assert set(rows) == set(ids)
            for hit in hits:
                assert hit.claim is None or hit.claim == rows[hit.claim_id]
            return {hit.claim_id: hit.claim for hit in hits}

        carried()  # a first read, which a store may keep
        clock.advance(1)
        # The edit's row: the same id at the next revision, or a new row superseding it.
        edit = search_store.update_content(
            A,
            edited.id,
            expected_revision=edited.revision,
            content="Keeps bees on the roof terrace",
            now=clock.now(),
        )
        search_store.record_access(A, [counted.id], now=clock.now())
        search_store.archive(A, archived.id, now=clock.now())
        assert set(carried()) == {edit.id, counted.id}

    def test_access_is_counted_for_recallable_rows_only(
        self, search_store: SearchStore, clock: ManualClock
    ) -> None:
        """R-READ-8: access counters feed scoring; archived rows are not bumped."""
        live = self._add(search_store, clock, "Plays chess")
        gone = self._add(search_store, clock, "Played checkers")
        search_store.archive(A, gone.id, now=clock.now())
        assert search_store.record_access(A, [live.id, gone.id, live.id], now=clock.now()) == 1
        seen = search_store.get(A, live.id)
        assert (seen.access_count, seen.last_accessed_at) == (1, clock.now())

    def test_archive_is_recoverable_and_restore_re_embeds(
        self, search_store: SearchStore, clock: ManualClock
    ) -> None:
        """R-FORGET-2: archive hides from recall but keeps the row; restore brings it back."""
        claim = self._add(search_store, clock, "Allergic to peanuts")
        archived = search_store.archive(A, claim.id, now=clock.now())
        assert archived.lifecycle is Lifecycle.ARCHIVED and archived.revision == 2
        assert search_store.archive(A, claim.id, now=clock.now()).revision == 2  # idempotent
        assert search_store.list_claims(A) == []
        assert [c.id for c in search_store.list_claims(A, include_inactive=True)] == [claim.id]
        assert search_store.search_fts(A, ["peanuts"], scope_filter=AGENT_ONLY, limit=5) == []
        replay = search_store.insert(
            claim_draft("Allergic to peanuts"), origin=EXTRACTION, now=clock.now()
        )
        assert replay.status is InsertStatus.DUPLICATE  # archived text is not re-absorbed
        restored = search_store.restore(A, claim.id, now=clock.now())
        assert restored.lifecycle is Lifecycle.ACTIVE
        assert restored.embedding_state is EmbeddingState.PENDING
        assert self._ids(
            search_store.search_fts(A, ["peanuts"], scope_filter=AGENT_ONLY, limit=5)
        ) == [claim.id]
