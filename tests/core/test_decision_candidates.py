"""Candidate preparation and temporal reconciliation (reference §7.4, §7.6)."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_core.domain.claims import Category, ClaimKind
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import (
    ATEMPORAL,
    Interval,
    Precision,
    TemporalKind,
    TemporalMetadata,
)
from memory_core.ports.extraction import CandidateClaim, RejectionReason
from memory_core.services.write.decision.candidates import (
    WriteContext,
    prepare_candidates,
    reconcile_equivalent,
    reconcile_merged,
)
from memory_core.settings import MemorySettings

NOW = datetime(2026, 3, 1, tzinfo=UTC)
MAX_CODE_POINTS = MemorySettings().extracted_claim_max_code_points
CONTEXT = WriteContext(
    agent_id="agent-1",
    now=NOW,
    session_id="s1",
    extractor="rules",
    entry_order={"m1": 1, "m2": 2, "m3": 3},
)


def _state(day: int, confidence: float = 0.9) -> TemporalMetadata:
    return TemporalMetadata(
        kind=TemporalKind.STATE,
        interval=Interval(valid_from=datetime(2026, 1, day, tzinfo=UTC)),
        precision=Precision.DAY,
        timezone="Europe/Berlin",
        confidence=confidence,
    )


def test_over_long_candidate_is_rejected_not_truncated() -> None:
    """§7.4 / SPEC §11: auto-extracted claims are ≤2,000 code points; longer ones rejected."""
    batch = prepare_candidates(
        CONTEXT,
        [CandidateClaim(content="a" * 2_001), CandidateClaim(content="b" * 2_000)],
        max_code_points=MAX_CODE_POINTS,
    )
    assert [len(d.content) for d in batch.drafts] == [2_000]
    assert batch.rejected == (RejectionReason.CANDIDATE_TOO_LARGE.value,)


def test_duplicates_by_kind_and_canonical_content_merge_with_their_sources() -> None:
    """§7.4: duplicates within a batch merge; sources and the best evidence are kept."""
    batch = prepare_candidates(
        CONTEXT,
        [
            CandidateClaim(content="The user likes tea.", source_entry_ids=("m1",)),
            CandidateClaim(
                content="  The user   likes tea. ", importance=0.9, source_entry_ids=("m3",)
            ),
            CandidateClaim(content="The user likes tea.", kind=ClaimKind.EPISODIC),
        ],
        max_code_points=MAX_CODE_POINTS,
    )
    assert batch.merged == 1
    semantic, episodic = batch.drafts
    assert (semantic.kind, episodic.kind) == (ClaimKind.SEMANTIC, ClaimKind.EPISODIC)
    assert semantic.importance == 0.9
    assert semantic.source.entry_ids == ("m1", "m3")
    assert (semantic.source.first_order_seq, semantic.source.last_order_seq) == (1, 3)
    assert semantic.source.extractor == "rules" and semantic.source.session_id == "s1"


def test_kind_follows_category_and_importance_floor_applies() -> None:
    """§3.1: task outcomes are episodic; importance = max(stated, category floor)."""
    batch = prepare_candidates(
        CONTEXT,
        [
            CandidateClaim(content="Shipped v2.", category=Category.TASK_OUTCOME, importance=0.1),
            CandidateClaim(content="Uses uv.", category=Category.PROJECT_FACT, importance=0.9),
        ],
        max_code_points=MAX_CODE_POINTS,
    )
    outcome, fact = batch.drafts
    assert outcome.kind is ClaimKind.EPISODIC and outcome.importance == 0.55
    assert fact.kind is ClaimKind.SEMANTIC and fact.importance == 0.9


def test_extraction_cannot_write_internal_or_reflection_rows() -> None:
    """R-DOM-1: persona/working are internal, reflections come from maintenance."""
    batch = prepare_candidates(
        CONTEXT,
        [
            CandidateClaim(content="I am helpful.", kind=ClaimKind.PERSONA),
            CandidateClaim(content="A pattern.", kind=ClaimKind.REFLECTION),
        ],
        max_code_points=MAX_CODE_POINTS,
    )
    assert batch.drafts == ()
    assert batch.rejected == (RejectionReason.INVALID_CANDIDATE.value,) * 2


def test_drafts_take_the_context_scope() -> None:
    """R-SCOPE-2: automatic extraction writes the context's scope (Agent by default)."""
    batch = prepare_candidates(
        CONTEXT, [CandidateClaim(content="x")], max_code_points=MAX_CODE_POINTS
    )
    assert batch.drafts[0].scope == Scope.agent()
    narrow = WriteContext(agent_id="agent-1", now=NOW, scope=Scope.session("s1"))
    assert prepare_candidates(
        narrow, [CandidateClaim(content="x")], max_code_points=MAX_CODE_POINTS
    ).drafts[0].scope == Scope.session("s1")


def test_equivalent_claims_reconcile_per_section_7_6() -> None:
    """§7.6: dated beats atemporal; differing readings keep the existing; else the surer."""
    assert reconcile_equivalent(_state(1), ATEMPORAL) == _state(1)
    assert reconcile_equivalent(ATEMPORAL, _state(1)) == _state(1)
    assert reconcile_equivalent(_state(1), _state(2)) == _state(1)
    assert reconcile_equivalent(_state(1, 0.6), _state(1, 0.95)) == _state(1, 0.95)
    assert reconcile_equivalent(_state(1, 0.95), _state(1, 0.6)) == _state(1, 0.95)


def test_merged_content_takes_the_metadata_of_the_side_it_repeats() -> None:
    """§7.6: equal to one side → that side; new text with conflicting readings → atemporal."""

    def merged(text: str, existing: TemporalMetadata, incoming: TemporalMetadata):
        return reconcile_merged(
            text,
            existing_content="old text",
            existing=existing,
            incoming_content="new text",
            incoming=incoming,
        )

    assert merged("old  text", _state(1), _state(2)) == _state(1)
    assert merged("new text", _state(1), _state(2)) == _state(2)
    assert merged("other", ATEMPORAL, _state(2)) == _state(2)
    assert merged("other", _state(1), ATEMPORAL) == _state(1)
    assert merged("other", _state(1), _state(2)) == ATEMPORAL
    assert merged("other", _state(1, 0.5), _state(1, 0.9)) == _state(1, 0.9)
