"""The decision step against the real apsw store (reference §7.4; R-WRITE-4, R-SCOPE-3,
R-LINEAGE-1, R-DIR-1)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fake_providers import ScriptedTextProvider
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim, ClaimDraft, ClaimKind, WriteOrigin
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.errors import ProviderUnavailable
from memory_core.domain.scope import Scope
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import DerivationKind
from memory_core.ports.extraction import CandidateClaim, DirectiveSuggestion, ExtractionResult
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.write.decision.service import DecisionService, WriteContext, WriteReport
from memory_core.settings import MemorySettings

AGENT = "agent-1"
NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[ApswClaimStore]:
    opened = ApswClaimStore(
        tmp_path / "memory.sqlite3",
        clock=clock,
        secret_policy=PatternSecretPolicy(mode="reject"),
        synchronous="NORMAL",
    )
    yield opened
    opened.close()


class SloppyNeighbours:
    """A finder that ignores scope on purpose: the decision step must not trust it."""

    def __init__(self, store: ApswClaimStore) -> None:
        self.store = store
        self.calls = 0

    async def find(
        self,
        agent_id: str,
        scope: Scope,
        texts: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[Claim]]:
        self.calls += 1
        everything = list(self.store.list_claims(agent_id, limit=100))
        return [everything for _ in texts]


def _context(clock: ManualClock, scope: Scope | None = None) -> WriteContext:
    return WriteContext(
        agent_id=AGENT, now=clock.now(), scope=scope or Scope.agent(), session_id="s1"
    )


def _seed(store: ApswClaimStore, content: str, **fields: object) -> Claim:
    fields.setdefault("kind", ClaimKind.SEMANTIC)
    outcome = store.insert(
        ClaimDraft(agent_id=AGENT, content=content, **fields),  # type: ignore[arg-type]
        origin=WriteOrigin.EXTRACTION,
        now=NOW - timedelta(days=1),
    )
    assert outcome.claim is not None
    return outcome.claim


def _decide(
    service: DecisionService,
    clock: ManualClock,
    *candidates: CandidateClaim,
    suggestions: Sequence[DirectiveSuggestion] = (),
    scope: Scope | None = None,
) -> WriteReport:
    async def run() -> WriteReport:
        plan = await service.plan(
            _context(clock, scope),
            ExtractionResult(candidates=candidates, suggestions=suggestions),
            deadline=Deadline.after(clock, 60),
            cancel=CancellationToken(),
        )
        return service.apply(plan)

    return asyncio.run(run())


def _live(store: ApswClaimStore) -> set[str]:
    return {claim.content for claim in store.list_claims(AGENT, limit=100)}


# --- deterministic path ---------------------------------------------------------------------


def test_exact_replay_is_a_duplicate_not_a_second_row(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """§7.4: a provenance hit on a live row is a no-op duplicate."""
    existing = _seed(store, "The user likes tea.")
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content=" The user  likes tea."),
    )
    assert report.stored_ids == () and report.duplicate_ids == (existing.id,)
    assert len(store.list_claims(AGENT)) == 1


def test_forgotten_claim_is_suppressed_inside_the_insert(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-WRITE-4: the tombstone check happens in the store's insert transaction; the
    decision step only reports it."""
    forgotten = _seed(store, "The user likes tea.")
    store.delete(AGENT, forgotten.id, now=NOW)
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content="The user likes tea."),
    )
    assert report.suppressed == 1 and report.stored_ids == ()
    assert store.list_claims(AGENT) == []


def test_slot_supersedes_only_within_its_scope(store: ApswClaimStore, clock: ManualClock) -> None:
    """R-SCOPE-3, R-LINEAGE-1: a new home in Agent scope retires the Agent-scope holder of
    the slot with a lineage edge, and leaves a Session-scope holder alone."""
    old = _seed(store, "The user lives in Paris.", slot="user.home_city")
    narrow = _seed(
        store, "The user lives in Rome.", slot="user.home_city", scope=Scope.session("s9")
    )
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content="The user lives in Berlin.", slot="user.home_city"),
    )
    (new_id,) = report.stored_ids
    assert report.superseded == ((old.id, new_id),)
    assert store.get(AGENT, old.id).superseded_by == new_id
    assert store.get(AGENT, narrow.id).is_recallable
    assert [(e.parent_id, e.kind) for e in store.list_derivations(AGENT, new_id)] == [
        (old.id, DerivationKind.SUPERSEDE)
    ]


def test_same_content_in_another_scope_is_independent(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-SCOPE-3: the same text may live in two scopes; neither is a duplicate of the other."""
    _seed(store, "The user likes tea.")
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content="The user likes tea."),
        scope=Scope.session("s1"),
    )
    assert len(report.stored_ids) == 1 and report.duplicate_ids == ()


def test_a_secret_candidate_is_rejected_without_failing_the_batch(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-PRIV-1, R-TIME-4 spirit: one refused candidate never loses the others."""
    leaked = "The user's key is sk-proj-Zq8xV3nL5tR7wY9aB2cD4eF6gH8jK0mN1pQ3"
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content="The user likes tea."),
        CandidateClaim(content=leaked),
        CandidateClaim(content="The user works at Acme."),
    )
    assert len(report.stored_ids) == 2 and report.rejected_count("secret") == 1
    assert _live(store) == {"The user likes tea.", "The user works at Acme."}


def test_suggestions_become_drafts_once(store: ApswClaimStore, clock: ManualClock) -> None:
    """R-DIR-1: suggestions are stored as drafts; a repeat adds nothing."""
    suggestion = DirectiveSuggestion(
        kind=DirectiveKind.SUPPRESS_TOPIC, content="Do not bring up divorce.", topic="divorce"
    )
    first = _decide(
        DecisionService(store, settings=MemorySettings()), clock, suggestions=[suggestion]
    )
    again = _decide(
        DecisionService(store, settings=MemorySettings()), clock, suggestions=[suggestion]
    )
    assert len(first.directive_drafts) == 1 and again.directive_drafts == ()
    (directive,) = store.list_directives(AGENT)
    assert directive.status is DirectiveStatus.DRAFT


def test_report_payload_holds_ids_and_counts_only(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-FORGET-1 spirit: what the write step reports (anchors, audit) carries no content."""
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content="The user likes tea."),
        CandidateClaim(content="x" * 2_001),
    )
    text = json.dumps(report.payload())
    assert "tea" not in text and "xxx" not in text
    assert report.payload()["rejected"] == {"candidate-too-large": 1}


# --- llm mode ------------------------------------------------------------------------------


def _llm(
    store: ApswClaimStore, clock: ManualClock, *answers: object
) -> tuple[DecisionService, ScriptedTextProvider, SloppyNeighbours]:
    provider = ScriptedTextProvider(answers)  # type: ignore[arg-type]
    neighbours = SloppyNeighbours(store)
    service = DecisionService(
        store,
        gateway=ProviderGateway(clock=clock, text=provider, settings=MemorySettings()),
        neighbours=neighbours,
        settings=MemorySettings(),
    )
    return service, provider, neighbours


def _answer(*decisions: dict[str, object]) -> str:
    return json.dumps({"decisions": list(decisions)})


def test_llm_supersede_writes_merged_successor_with_lineage(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """§7.4, R-LINEAGE-1: SUPERSEDE inserts the merged text and retires the target, with a
    supersede edge, in one store transaction."""
    target = _seed(store, "The user likes green tea.")
    service, provider, _ = _llm(
        store,
        clock,
        _answer(
            {
                "candidateIndex": 0,
                "decision": "SUPERSEDE",
                "targetIndex": 0,
                "mergedContent": "The user now prefers oolong tea.",
            }
        ),
    )
    report = _decide(service, clock, CandidateClaim(content="The user likes oolong tea."))
    (new_id,) = report.stored_ids
    assert store.get(AGENT, new_id).content == "The user now prefers oolong tea."
    assert report.superseded == ((target.id, new_id),)
    assert store.get(AGENT, target.id).superseded_by == new_id
    assert len(provider.requests) == 1


def test_llm_never_targets_a_claim_of_another_scope(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-SCOPE-3: neighbours from another scope are dropped before the model sees them, so
    a decision cannot reach them; with no same-scope neighbour the model is not asked."""
    narrow = _seed(store, "The user likes green tea.", scope=Scope.session("s9"))
    service, provider, neighbours = _llm(
        store, clock, _answer({"candidateIndex": 0, "decision": "SUPERSEDE", "targetIndex": 0})
    )
    report = _decide(service, clock, CandidateClaim(content="The user likes oolong tea."))
    assert neighbours.calls == 1 and provider.requests == []
    assert len(report.stored_ids) == 1 and report.superseded == ()
    assert store.get(AGENT, narrow.id).is_recallable


def test_llm_update_noop_and_challenge(store: ApswClaimStore, clock: ManualClock) -> None:
    """§7.4: UPDATE supersedes with the merged text and counts as an update; NOOP writes
    nothing; a CHALLENGE of the target the same batch just retired is a plain add."""
    _seed(store, "The user likes tea.")
    service, _, _ = _llm(
        store,
        clock,
        _answer(
            {
                "candidateIndex": 0,
                "decision": "UPDATE",
                "targetIndex": 0,
                "mergedContent": "The user likes tea, especially sencha.",
            },
            {"candidateIndex": 1, "decision": "NOOP"},
            {"candidateIndex": 2, "decision": "CHALLENGE", "targetIndex": 0},
        ),
    )
    report = _decide(
        service,
        clock,
        CandidateClaim(content="The user likes sencha."),
        CandidateClaim(content="The user enjoys tea."),
        CandidateClaim(content="The user dislikes tea."),
    )
    assert (report.updated, report.noop, report.challenged) == (1, 1, 1)
    assert _live(store) == {"The user likes tea, especially sencha.", "The user dislikes tea."}


@pytest.mark.parametrize(
    "answer", ["not json", ProviderUnavailable("down"), _answer({"decision": "MERGE"})]
)
def test_unusable_decision_falls_back_to_add(
    store: ApswClaimStore, clock: ManualClock, answer: object
) -> None:
    """§7.4: invalid output or a failed decision call is a safe ADD, counted as fallback."""
    _seed(store, "The user likes tea.")
    service, _, _ = _llm(store, clock, answer)
    report = _decide(service, clock, CandidateClaim(content="The user likes sencha."))
    assert len(report.stored_ids) == 1 and report.decision_fallbacks == 1


def test_at_most_two_batches_of_four_go_to_the_model(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """§7.4: ≤4 candidates per prompt, ≤2 prompts; the overflow is ADDed and counted."""
    _seed(store, "The user likes tea.")
    noop = [{"candidateIndex": i, "decision": "NOOP"} for i in range(4)]
    service, provider, _ = _llm(store, clock, _answer(*noop), _answer(*noop))
    candidates = [CandidateClaim(content=f"The user likes tea number {i}.") for i in range(10)]
    report = _decide(service, clock, *candidates)
    assert len(provider.requests) == 2
    assert report.noop == 8 and len(report.stored_ids) == 2 and report.decision_fallbacks == 2


def test_slotted_candidates_skip_the_model(store: ApswClaimStore, clock: ManualClock) -> None:
    """§7.4: a slot decides deterministically; the model is not asked about it."""
    old = _seed(store, "The user lives in Paris.", slot="user.home_city")
    service, provider, neighbours = _llm(store, clock)
    report = _decide(
        service, clock, CandidateClaim(content="The user lives in Berlin.", slot="user.home_city")
    )
    assert provider.requests == [] and neighbours.calls == 0
    assert report.superseded[0][0] == old.id


def test_returning_to_a_retired_value_revives_it(store: ApswClaimStore, clock: ManualClock) -> None:
    """R-LINEAGE-1, R-SCOPE-3: Paris → Berlin → Paris. The retired Paris row is revived in
    the same supersede transaction that retires Berlin; lineage reads both ways and no
    second Paris row exists."""
    service = DecisionService(store, settings=MemorySettings())
    paris = CandidateClaim(content="The user lives in Paris.", slot="user.home_city")
    berlin = CandidateClaim(content="The user lives in Berlin.", slot="user.home_city")
    (paris_id,) = _decide(service, clock, paris).stored_ids
    clock.advance(60)
    (berlin_id,) = _decide(service, clock, berlin).stored_ids
    clock.advance(60)
    report = _decide(service, clock, paris)
    assert report.revived_ids == (paris_id,) and report.stored_ids == ()
    assert report.superseded == ((berlin_id, paris_id),)
    assert report.payload()["revived"] == [paris_id]
    assert _live(store) == {"The user lives in Paris."}
    assert store.get(AGENT, berlin_id).superseded_by == paris_id
    assert [(e.parent_id, e.child_id) for e in store.list_derivations(AGENT, paris_id)] == [
        (paris_id, berlin_id),
        (berlin_id, paris_id),
    ]
    assert len(store.list_claims(AGENT, include_inactive=True)) == 2


def test_llm_supersede_back_to_a_retired_text_revives_it(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """§7.4, R-LINEAGE-1: a model SUPERSEDE whose merged text is a retired claim's revives
    that claim instead of leaving the target pointing at a row nobody can recall."""
    old = _seed(store, "The user drinks green tea.")
    current = store.supersede(
        AGENT,
        old.id,
        ClaimDraft(agent_id=AGENT, kind=ClaimKind.SEMANTIC, content="The user drinks coffee."),
        expected_revision=old.revision,
        now=NOW,
    ).claim
    assert current is not None
    service, _, _ = _llm(
        store,
        clock,
        _answer(
            {
                "candidateIndex": 0,
                "decision": "SUPERSEDE",
                "targetIndex": 0,
                "mergedContent": "The user drinks green tea.",
            }
        ),
    )
    report = _decide(service, clock, CandidateClaim(content="The user is back on green tea."))
    assert report.revived_ids == (old.id,) and report.superseded == ((current.id, old.id),)
    assert _live(store) == {"The user drinks green tea."}


def test_returning_to_an_archived_value_keeps_the_current_one(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-FORGET-2: the user archived Paris; extraction hearing Paris again neither revives
    it nor retires Berlin."""
    service = DecisionService(store, settings=MemorySettings())
    paris = CandidateClaim(content="The user lives in Paris.", slot="user.home_city")
    (paris_id,) = _decide(service, clock, paris).stored_ids
    _decide(
        service, clock, CandidateClaim(content="The user lives in Berlin.", slot="user.home_city")
    )
    store.archive(AGENT, paris_id, now=NOW)
    report = _decide(service, clock, paris)
    assert report.revived_ids == () and report.superseded == ()
    assert report.duplicate_ids == (paris_id,)
    assert _live(store) == {"The user lives in Berlin."}


def test_saying_the_current_value_again_changes_nothing(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """§7.4: a slotted candidate equal to the slot's live value is a duplicate, not a
    supersede of a claim by itself."""
    service = DecisionService(store, settings=MemorySettings())
    berlin = CandidateClaim(content="The user lives in Berlin.", slot="user.home_city")
    (berlin_id,) = _decide(service, clock, berlin).stored_ids
    before = store.get(AGENT, berlin_id)
    report = _decide(service, clock, berlin)
    assert report.duplicate_ids == (berlin_id,) and report.superseded == ()
    assert store.get(AGENT, berlin_id) == before


def test_stray_holders_newer_than_the_revived_value_are_retired_too(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-LINEAGE-1: two live holders of one slot (written around the decision step) are
    both retired in favour of the value the user returned to."""
    service = DecisionService(store, settings=MemorySettings())
    paris = CandidateClaim(content="The user lives in Paris.", slot="user.home_city")
    (paris_id,) = _decide(service, clock, paris).stored_ids
    clock.advance(60)
    (berlin_id,) = _decide(
        service, clock, CandidateClaim(content="The user lives in Berlin.", slot="user.home_city")
    ).stored_ids
    clock.advance(60)
    stray = store.insert(
        ClaimDraft(
            agent_id=AGENT,
            kind=ClaimKind.SEMANTIC,
            content="The user lives in Rome.",
            slot="user.home_city",
        ),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    ).claim
    assert stray is not None
    report = _decide(service, clock, paris)
    assert report.revived_ids == (paris_id,)
    assert set(report.superseded) == {(berlin_id, paris_id), (stray.id, paris_id)}
    assert _live(store) == {"The user lives in Paris."}


def test_a_slot_holder_behind_ten_thousand_newer_rows_is_still_retired(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """§7.4, R-LINEAGE-1: the live holder is found by the store's slot lookup however many
    newer rows the scope holds (a bounded listing of the scope missed one behind 10k)."""
    holder = _seed(store, "The user lives in Paris.", slot="user.home_city")
    store.insert_many(
        [
            ClaimDraft(agent_id=AGENT, kind=ClaimKind.SEMANTIC, content=f"later fact {i}")
            for i in range(10_050)
        ],
        origin=WriteOrigin.EXTRACTION,
        now=NOW,
    )
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content="The user lives in Berlin.", slot="user.home_city"),
    )
    (berlin_id,) = report.stored_ids
    assert report.superseded == ((holder.id, berlin_id),)


def test_exact_replay_skips_the_model(store: ApswClaimStore, clock: ManualClock) -> None:
    """§7.4: an exact provenance hit is a duplicate no-op; no decision call is spent on it."""
    existing = _seed(store, "The user likes tea.")
    service, provider, _ = _llm(store, clock)
    report = _decide(service, clock, CandidateClaim(content="The user likes tea."))
    assert provider.requests == [] and report.duplicate_ids == (existing.id,)


def test_llm_challenge_of_a_live_target_is_a_conflict_record(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """§7.8: CHALLENGE stores the candidate as a challenger of its target (conflicted, never
    recalled) and the target stays live; the pair is an open conflict."""
    target = _seed(store, "The user likes tea.")
    service, _, _ = _llm(
        store, clock, _answer({"candidateIndex": 0, "decision": "CHALLENGE", "targetIndex": 0})
    )
    report = _decide(service, clock, CandidateClaim(content="The user dislikes tea."))
    assert report.challenged == 1
    assert _live(store) == {"The user likes tea."}
    [conflict] = store.list_conflicts(AGENT, limit=10)
    assert conflict.target.id == target.id
    assert conflict.challenger.content == "The user dislikes tea."


def test_new_slots_share_the_plan_s_one_insert(
    store: ApswClaimStore, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15, R-LINEAGE-1: slots nobody holds and plain additions are stored in one
    insert transaction; a slot held already is still retired with its lineage edge, and of
    two states of one slot in the plan the later said retires the earlier."""
    held = _seed(store, "The user lives in Paris.", slot="user.home_city")
    batches: list[int] = []
    insert_many = store.insert_many

    def counted(drafts: Sequence[ClaimDraft], **kw: object) -> object:
        batches.append(len(drafts))
        return insert_many(drafts, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "insert_many", counted)
    report = _decide(
        DecisionService(store, settings=MemorySettings()),
        clock,
        CandidateClaim(content="The user works at Acme.", slot="user.employer"),
        CandidateClaim(content="The user likes tea."),
        CandidateClaim(content="The user is called Sam.", slot="user.name"),
        CandidateClaim(content="The user lives in Berlin.", slot="user.home_city"),
        CandidateClaim(content="The user drives a Volvo.", slot="user.car"),
        CandidateClaim(content="The user drives a Saab.", slot="user.car"),
    )
    assert batches == [1, 3]  # the first state of user.car alone, then one batch
    assert _live(store) == {
        "The user works at Acme.",
        "The user likes tea.",
        "The user is called Sam.",
        "The user lives in Berlin.",
        "The user drives a Saab.",
    }
    berlin = next(c for c in store.list_claims(AGENT) if c.slot == "user.home_city")
    assert store.get(AGENT, held.id).superseded_by == berlin.id
    volvo = next(c for c in store.list_claims(AGENT, include_inactive=True) if "Volvo" in c.content)
    assert not volvo.is_recallable and (volvo.id, volvo.superseded_by) in report.superseded
