"""`ClaimStoreContract`: the semantics `memory_core.ports.claims.ClaimStore` promises, as tests.

Subclass it in a test module and implement `make_claim_store`:

    class TestMyStore(ClaimStoreContract):
        def make_claim_store(self, tmp_path, *, clock, secret_policy):
            return MyStore(tmp_path / "db", clock=clock, secret_policy=secret_policy)

The store must use the `clock` and `secret_policy` it is given. Requirement ids in the
docstrings say what each test proves.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from memory_contracts.claim_store_cases import TrustPlaneAndClearCases
from memory_contracts.claim_store_embeddings import EmbeddingBookkeepingCases
from memory_contracts.claim_store_lineage import LineageAndSlotCases
from memory_contracts.claim_store_support import (
    CONTRACT_EPOCH,
    IDENTITY,
    SECRET_SAMPLE,
    MarkerSecretPolicy,
    claim_draft,
    full_source,
    state_temporal,
)
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import (
    Category,
    EmbeddingIdentity,
    EmbeddingState,
    Lifecycle,
    WriteOrigin,
)
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.errors import (
    NotFound,
    RevisionConflict,
    ScopeError,
    SecretRejected,
    ValidationError,
)
from memory_core.domain.provenance import provenance_key
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.ports.claims import (
    ClaimStore,
    DerivationKind,
    InsertStatus,
    MatchMode,
)
from memory_core.ports.secrets import SecretPolicy

__all__ = ["ClaimStoreContract"]

A, B = "agent-a", "agent-b"
AGENT_ONLY = ScopeFilter.agent_only()
EXTRACTION, MODEL_TOOL, USER_ADD = (
    WriteOrigin.EXTRACTION,
    WriteOrigin.MODEL_TOOL,
    WriteOrigin.USER_ADD,
)


class ClaimStoreContract(TrustPlaneAndClearCases, EmbeddingBookkeepingCases, LineageAndSlotCases):
    """Inherit, implement `make_claim_store`; pytest collects the inherited tests."""

    def make_claim_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> ClaimStore:
        raise NotImplementedError

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock(CONTRACT_EPOCH)

    @pytest.fixture
    def claim_store(self, tmp_path: Path, clock: ManualClock) -> Iterator[ClaimStore]:
        store = self.make_claim_store(tmp_path, clock=clock, secret_policy=MarkerSecretPolicy())
        yield store
        store.close()

    # --- helpers ---------------------------------------------------------------------------
    @staticmethod
    def _add(store: ClaimStore, clock: ManualClock, content: str, **kwargs: object):
        origin = kwargs.pop("origin", EXTRACTION)
        outcome = store.insert(claim_draft(content, **kwargs), origin=origin, now=clock.now())  # type: ignore[arg-type]
        assert outcome.status is InsertStatus.INSERTED, outcome.status
        assert outcome.claim is not None
        return outcome.claim

    @staticmethod
    def _ids(hits: object) -> list[str]:
        return [hit.claim_id for hit in hits]  # type: ignore[attr-defined]

    # --- insert, duplicate, secrets --------------------------------------------------------
    def test_insert_round_trips_every_field(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-DOM-1, R-DOM-3, R-TIME-1: every field survives storage; the key is the scoped one."""
        temporal = state_temporal(CONTRACT_EPOCH - timedelta(days=3))
        scope = Scope.session("sess-1")
        draft = claim_draft(
            "User moved to Berlin",
            kind="semantic",
            scope=scope,
            temporal=temporal,
            category=Category.USER_PREFERENCE,
            importance=0.8,
            confidence=0.6,
            source=full_source(),
            slot="user.home_city",
        )
        outcome = claim_store.insert(draft, origin=EXTRACTION, now=clock.now())
        assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
        stored = claim_store.get(A, outcome.claim.id)
        assert stored == outcome.claim
        assert (stored.content, stored.scope, stored.temporal) == (draft.content, scope, temporal)
        assert (stored.category, stored.importance, stored.confidence) == (
            Category.USER_PREFERENCE,
            0.8,
            0.6,
        )
        assert stored.source == full_source() and stored.slot == "user.home_city"
        assert stored.provenance_key == provenance_key(A, "semantic", scope, draft.content)
        assert (stored.revision, stored.lifecycle, stored.embedding_state) == (
            1,
            Lifecycle.ACTIVE,
            EmbeddingState.PENDING,
        )
        assert stored.created_at == stored.updated_at == clock.now()

    def test_same_provenance_is_duplicate_and_stores_nothing(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-DOM-3: whitespace and NFC variants share the key; the existing row comes back."""
        first = self._add(claim_store, clock, "Café opens at nine")
        variant = unicodedata.normalize("NFD", "  Café   opens at nine ")
        outcome = claim_store.insert(claim_draft(variant), origin=EXTRACTION, now=clock.now())
        assert outcome.status is InsertStatus.DUPLICATE
        assert outcome.claim is not None and outcome.claim.id == first.id
        assert [c.id for c in claim_store.list_claims(A)] == [first.id]

    def test_same_content_in_another_scope_is_an_independent_claim(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-3: one text may live independently in several scopes."""
        agent_row = self._add(claim_store, clock, "Prefers tabs")
        session_row = self._add(claim_store, clock, "Prefers tabs", scope=Scope.session("s1"))
        assert agent_row.id != session_row.id
        assert agent_row.provenance_key != session_row.provenance_key

    def test_insert_many_reports_each_draft_in_order(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-WRITE-4: a chunk's claims commit together; a repeat inside it is a duplicate."""
        outcomes = claim_store.insert_many(
            [claim_draft("fact one"), claim_draft("fact two"), claim_draft("fact  one")],
            origin=EXTRACTION,
            now=clock.now(),
        )
        assert [o.status for o in outcomes] == [
            InsertStatus.INSERTED,
            InsertStatus.INSERTED,
            InsertStatus.DUPLICATE,
        ]
        assert outcomes[2].claim is not None and outcomes[0].claim is not None
        assert outcomes[2].claim.id == outcomes[0].claim.id

    def test_secret_content_is_refused_before_anything_is_stored(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-PRIV-1: the store applies its secret policy to every write, batch included."""
        with pytest.raises(SecretRejected):
            claim_store.insert_many(
                [claim_draft("harmless"), claim_draft(f"key is {SECRET_SAMPLE}")],
                origin=USER_ADD,
                now=clock.now(),
            )
        with pytest.raises(SecretRejected):
            claim_store.create_directive(
                A, DirectiveKind.INSTRUCTION, f"use {SECRET_SAMPLE}", now=clock.now()
            )
        assert claim_store.list_claims(A) == [] and claim_store.list_directives(A) == []

    def test_internal_rows_are_never_listed_embedded_or_searched(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-DOM-1: persona/working rows are internal: not_applicable, never recallable."""
        persona = self._add(claim_store, clock, "I am a careful assistant", kind="persona")
        assert persona.embedding_state is EmbeddingState.NOT_APPLICABLE
        assert claim_store.list_claims(A, include_inactive=True) == []
        assert claim_store.search_fts(A, ["careful"], scope_filter=AGENT_ONLY, limit=5) == []
        assert claim_store.list_pending_embeddings(A, limit=10) == []

    # --- tombstones (R-WRITE-4, R-WRITE-5, R-FORGET-1) -------------------------------------
    def test_forgotten_claim_replay_is_suppressed_except_for_an_explicit_user_add(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-1, R-WRITE-4/5: exact replays (whitespace, NFC, other kind) create 0 rows
        through extraction and the model tool; one user add re-creates it, atomically."""
        text = "Lives at Rosenstraße 5"
        claim = self._add(claim_store, clock, text)
        deleted = claim_store.delete(A, claim.id, now=clock.now())
        assert deleted.tombstones_written == 2
        replays = [text, f"  {text}  ", unicodedata.normalize("NFD", text), text.replace(" ", "\t")]
        for origin in (EXTRACTION, MODEL_TOOL):
            for variant in replays:
                for kind in ("semantic", "episodic"):
                    outcome = claim_store.insert(
                        claim_draft(variant, kind=kind), origin=origin, now=clock.now()
                    )
                    assert outcome.status is InsertStatus.SUPPRESSED, (origin, variant, kind)
        assert claim_store.list_claims(A, include_inactive=True) == []
        again = claim_store.insert(claim_draft(text), origin=USER_ADD, now=clock.now())
        assert again.status is InsertStatus.INSERTED and again.released_tombstones >= 1
        assert len(claim_store.list_claims(A)) == 1
        later = claim_store.insert(claim_draft(text), origin=MODEL_TOOL, now=clock.now())
        assert later.status is InsertStatus.DUPLICATE

    def test_similar_but_independent_facts_are_not_suppressed(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-1: only exact replays are suppressed."""
        claim = self._add(claim_store, clock, "Lives in Berlin")
        claim_store.delete(A, claim.id, now=clock.now())
        self._add(claim_store, clock, "Lives in Berlin Mitte")
        self._add(claim_store, clock, "lives in berlin")  # case is preserved in identities

    def test_tombstones_belong_to_their_owner(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-PRIV-2: A forgetting a text never suppresses B's identical claim."""
        claim = self._add(claim_store, clock, "Likes jazz")
        claim_store.delete(A, claim.id, now=clock.now())
        self._add(claim_store, clock, "Likes jazz", agent_id=B)

    # --- isolation (R-PRIV-2, R-STORE-3) ---------------------------------------------------
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

    def test_fts_applies_the_owner_predicate_before_limit(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-READ-3: B's many better-ranked matches never crowd A's rows out of a small LIMIT."""
        claim_store.insert_many(
            [
                claim_draft(f"coffee coffee coffee {i}", agent_id=B, importance=1.0)
                for i in range(150)
            ],
            origin=EXTRACTION,
            now=clock.now(),
        )
        mine = {
            self._add(
                claim_store, clock, f"Has coffee with colleague number {i}", importance=0.1
            ).id
            for i in range(3)
        }
        hits = claim_store.search_fts(A, ["coffee"], scope_filter=AGENT_ONLY, limit=3)
        assert set(self._ids(hits)) == mine
        b_hits = claim_store.search_fts(B, ["coffee"], scope_filter=AGENT_ONLY, limit=5)
        assert len(b_hits) == 5 and not set(self._ids(b_hits)) & mine

    # --- scope (R-SCOPE-1) -----------------------------------------------------------------
    def test_narrow_scopes_are_visible_only_with_their_context(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-1: missing or blank narrow context never widens; each session sees its own."""
        agent_row = self._add(claim_store, clock, "Project uses Python")
        s1 = self._add(
            claim_store, clock, "Python debugging in session one", scope=Scope.session("s1")
        )
        s2 = self._add(
            claim_store, clock, "Python packaging in session two", scope=Scope.session("s2")
        )
        u1 = self._add(claim_store, clock, "Python style of user one", scope=Scope.user("u1"))
        everyone = [agent_row.id, s1.id, s2.id, u1.id]

        def visible(context: ScopeContext | None) -> set[str]:
            scope_filter = ScopeFilter.from_context(context)
            found = set(
                self._ids(
                    claim_store.search_fts(A, ["Python"], scope_filter=scope_filter, limit=10)
                )
            )
            applicable = {
                c.id
                for c in claim_store.list_applicable_by_ids(A, everyone, scope_filter=scope_filter)
            }
            listed = {c.id for c in claim_store.list_claims(A, scope_filter=scope_filter)}
            assert found == applicable == listed
            return found

        assert visible(None) == {agent_row.id}
        assert visible(ScopeContext(session_id="   ")) == {agent_row.id}
        assert visible(ScopeContext(session_id="s1")) == {agent_row.id, s1.id}
        assert visible(ScopeContext(session_id="s2", user_id="u1")) == {agent_row.id, s2.id, u1.id}
        assert {c.id for c in claim_store.list_claims(A)} == set(everyone)

    # --- FTS behaviour (R-READ-3) ----------------------------------------------------------
    def test_fts_matches_substrings_short_terms_and_never_parses_query_syntax(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-READ-3: ≥3-code-point terms are lexical; shorter terms (a 2-character CJK word,
        "Go") use the escaped fallback; quotes, wildcards and operators are literal text."""
        go = self._add(claim_store, clock, "Writes services in Go")
        beijing = self._add(claim_store, clock, "下个月去北京出差")
        percent = self._add(claim_store, clock, "Is 100% sure about NEAR(x) syntax")
        self._add(claim_store, clock, "Enjoys long walks")

        def search(*terms: str, mode: MatchMode = MatchMode.ANY) -> list[str]:
            hits = claim_store.search_fts(
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

    def test_fts_breaks_rank_ties_by_importance(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-READ-3: equal lexical rank → higher importance first."""
        low = self._add(claim_store, clock, "Drinks oolong daily", importance=0.2)
        high = self._add(
            claim_store, clock, "Drinks oolong daily", scope=Scope.session("s9"), importance=0.9
        )
        scope_filter = ScopeFilter.from_context(ScopeContext(session_id="s9"))
        hits = claim_store.search_fts(A, ["oolong"], scope_filter=scope_filter, limit=5)
        assert self._ids(hits) == [high.id, low.id]

    # --- revisions, CAS, lineage (R-LINEAGE-1) ---------------------------------------------
    def test_manual_edit_is_compare_and_set_on_the_revision(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-LINEAGE-1: a stale revision loses; a new text supersedes with a manual_edit edge."""
        claim = self._add(claim_store, clock, "Meeting on Monday")
        clock.advance(60)
        with pytest.raises(RevisionConflict):
            claim_store.update_content(
                A, claim.id, expected_revision=7, content="x", now=clock.now()
            )
        edited = claim_store.update_content(
            A, claim.id, expected_revision=1, content="Meeting on Tuesday", now=clock.now()
        )
        assert edited.id != claim.id and edited.content == "Meeting on Tuesday"
        assert edited.embedding_state is EmbeddingState.PENDING
        old = claim_store.get(A, claim.id)
        assert old.superseded_by == edited.id and old.revision == 2
        edges = claim_store.list_derivations(A, edited.id)
        assert [(e.parent_id, e.child_id, e.kind) for e in edges] == [
            (claim.id, edited.id, DerivationKind.MANUAL_EDIT)
        ]
        with pytest.raises(RevisionConflict):
            claim_store.update_content(
                A, claim.id, expected_revision=1, content="y", now=clock.now()
            )
        same = claim_store.update_content(
            A, edited.id, expected_revision=1, content="Meeting  on Tuesday ", now=clock.now()
        )
        assert same.id == edited.id and same.revision == 2

    def test_supersede_stays_in_scope_closes_the_state_and_records_lineage(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-3, R-LINEAGE-1, R-TIME-1: same scope only; a state's interval ends now."""
        started = CONTRACT_EPOCH - timedelta(days=30)
        old = self._add(claim_store, clock, "Lives in Hamburg", temporal=state_temporal(started))
        clock.advance(3600)
        with pytest.raises(ScopeError):
            claim_store.supersede(
                A,
                old.id,
                claim_draft("Lives in Bremen", scope=Scope.session("s1")),
                expected_revision=1,
                now=clock.now(),
            )
        with pytest.raises(RevisionConflict):
            claim_store.supersede(
                A, old.id, claim_draft("Lives in Bremen"), expected_revision=2, now=clock.now()
            )
        outcome = claim_store.supersede(
            A,
            old.id,
            claim_draft("Lives in Bremen", temporal=state_temporal(clock.now())),
            expected_revision=1,
            now=clock.now(),
        )
        assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
        retired = claim_store.get(A, old.id)
        assert retired.superseded_by == outcome.claim.id
        assert retired.temporal.interval.valid_until == clock.now()
        assert [
            (e.parent_id, e.kind) for e in claim_store.list_derivations(A, outcome.claim.id)
        ] == [(old.id, DerivationKind.SUPERSEDE)]

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

    def test_access_is_counted_for_recallable_rows_only(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-READ-8: access counters feed scoring; archived rows are not bumped."""
        live = self._add(claim_store, clock, "Plays chess")
        gone = self._add(claim_store, clock, "Played checkers")
        claim_store.archive(A, gone.id, now=clock.now())
        assert claim_store.record_access(A, [live.id, gone.id, live.id], now=clock.now()) == 1
        seen = claim_store.get(A, live.id)
        assert (seen.access_count, seen.last_accessed_at) == (1, clock.now())

    # --- lifecycle (R-FORGET-2) ------------------------------------------------------------
    def test_archive_is_recoverable_and_restore_re_embeds(
        self, claim_store: ClaimStore, clock: ManualClock
    ) -> None:
        """R-FORGET-2: archive hides from recall but keeps the row; restore brings it back."""
        claim = self._add(claim_store, clock, "Allergic to peanuts")
        archived = claim_store.archive(A, claim.id, now=clock.now())
        assert archived.lifecycle is Lifecycle.ARCHIVED and archived.revision == 2
        assert claim_store.archive(A, claim.id, now=clock.now()).revision == 2  # idempotent
        assert claim_store.list_claims(A) == []
        assert [c.id for c in claim_store.list_claims(A, include_inactive=True)] == [claim.id]
        assert claim_store.search_fts(A, ["peanuts"], scope_filter=AGENT_ONLY, limit=5) == []
        replay = claim_store.insert(
            claim_draft("Allergic to peanuts"), origin=EXTRACTION, now=clock.now()
        )
        assert replay.status is InsertStatus.DUPLICATE  # archived text is not re-absorbed
        restored = claim_store.restore(A, claim.id, now=clock.now())
        assert restored.lifecycle is Lifecycle.ACTIVE
        assert restored.embedding_state is EmbeddingState.PENDING
        assert self._ids(
            claim_store.search_fts(A, ["peanuts"], scope_filter=AGENT_ONLY, limit=5)
        ) == [claim.id]

    @pytest.mark.parametrize("kind", ["persona", "working"])
    def test_lifecycle_and_delete_refuse_internal_rows(
        self, claim_store: ClaimStore, clock: ManualClock, kind: str
    ) -> None:
        """R-DOM-1: persona/working rows are never archived, restored, edited or deleted here."""
        row = self._add(claim_store, clock, "internal projection text", kind=kind)
        now = clock.now()
        for call in (
            lambda: claim_store.archive(A, row.id, now=now),
            lambda: claim_store.restore(A, row.id, now=now),
            lambda: claim_store.delete(A, row.id, now=now),
            lambda: claim_store.update_content(
                A, row.id, expected_revision=1, content="x", now=now
            ),
        ):
            with pytest.raises(ValidationError):
                call()
        assert claim_store.get(A, row.id) == row
