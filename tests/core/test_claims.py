"""Claim values: separate typed fields, internal kinds, limits, ranges (R-DOM-1, R-DOM-2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import attrs
import pytest

from memory_core.domain.claims import (
    CATEGORY_IMPORTANCE_FLOORS,
    DEFAULT_CONFIDENCE,
    DEFAULT_IMPORTANCE,
    MAX_MANUAL_CONTENT_CODE_POINTS,
    Category,
    Claim,
    ClaimDraft,
    ClaimKind,
    EmbeddingIdentity,
    EmbeddingState,
    Lifecycle,
    kind_for_category,
)
from memory_core.domain.errors import TemporalError, ValidationError
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import ATEMPORAL, Interval, TemporalKind, TemporalMetadata

T0 = datetime(2026, 1, 1, tzinfo=UTC)

STATE = TemporalMetadata(
    kind=TemporalKind.STATE,
    interval=Interval(valid_from=T0),
    precision="day",
    timezone="Europe/Berlin",
    confidence=0.4,
)


def claim(**overrides: object) -> Claim:
    fields: dict[str, object] = {
        "id": "c1",
        "agent_id": "agent-1",
        "kind": ClaimKind.SEMANTIC,
        "content": "Prefers tea",
        "canonical_content": "Prefers tea",
        "created_at": T0,
        "updated_at": T0,
    }
    fields.update(overrides)
    return Claim(**fields)  # type: ignore[arg-type]


def draft(**overrides: object) -> ClaimDraft:
    fields: dict[str, object] = {"agent_id": "agent-1", "kind": "semantic", "content": "x"}
    fields.update(overrides)
    return ClaimDraft(**fields)  # type: ignore[arg-type]


def test_claim_keeps_lifecycle_embedding_temporal_and_scope_as_separate_typed_fields() -> None:
    """R-DOM-1: lifecycle, embedding state, temporal metadata and scope are separate fields."""
    stored = claim(
        lifecycle="archived",
        embedding_state="ready",
        temporal=STATE,
        scope=Scope.session("s1"),
    )
    assert stored.lifecycle is Lifecycle.ARCHIVED
    assert stored.embedding_state is EmbeddingState.READY
    assert stored.temporal_kind is TemporalKind.STATE
    assert stored.scope == Scope.session("s1")
    field_types = {field.name: field.type for field in attrs.fields(Claim)}
    for name in ("lifecycle", "embedding_state", "temporal", "scope", "kind"):
        assert name in field_types


def test_claim_defaults_are_active_pending_agent_scope_atemporal() -> None:
    """R-DOM-1: a fresh claim is active, pending embedding, Agent scope, atemporal, revision 1."""
    stored = claim()
    assert stored.lifecycle is Lifecycle.ACTIVE
    assert stored.embedding_state is EmbeddingState.PENDING
    assert stored.scope == Scope.agent()
    assert stored.temporal == ATEMPORAL
    assert stored.revision == 1
    assert stored.access_count == 0


def test_factual_and_temporal_confidence_are_independent() -> None:
    """R-DOM-2: fact confidence and temporal confidence are different fields with own values."""
    stored = claim(confidence=0.95, temporal=STATE)
    assert stored.confidence == 0.95
    assert stored.temporal.confidence == 0.4
    assert stored.effective_confidence == 0.95


def test_unknown_confidence_counts_as_the_neutral_default() -> None:
    """R-DOM-2: a claim without stated fact confidence scores as 0.7."""
    assert claim().confidence is None
    assert claim().effective_confidence == DEFAULT_CONFIDENCE == 0.7


def test_claim_times_are_normalised_to_utc_and_naive_times_rejected() -> None:
    """R-DOM-1: created/updated times are aware UTC datetimes; naive ones are refused."""
    plus_two = timezone(timedelta(hours=2))
    stored = claim(created_at=datetime(2026, 1, 1, 2, 0, tzinfo=plus_two))
    assert stored.created_at == T0
    assert stored.created_at.tzinfo is UTC
    with pytest.raises(TemporalError) as caught:
        claim(updated_at=datetime(2026, 1, 1))
    assert caught.value.field == "updated_at"


@pytest.mark.parametrize(
    ("lifecycle", "superseded_by", "kind", "recallable"),
    [
        (Lifecycle.ACTIVE, None, ClaimKind.SEMANTIC, True),
        (Lifecycle.ACTIVE, None, ClaimKind.EPISODIC, True),
        (Lifecycle.ACTIVE, None, ClaimKind.REFLECTION, True),
        (Lifecycle.ARCHIVED, None, ClaimKind.SEMANTIC, False),
        (Lifecycle.CONFLICTED, None, ClaimKind.SEMANTIC, False),
        (Lifecycle.ACTIVE, "c2", ClaimKind.SEMANTIC, False),
        (Lifecycle.ACTIVE, None, ClaimKind.PERSONA, False),
        (Lifecycle.ACTIVE, None, ClaimKind.WORKING, False),
    ],
)
def test_recallable_means_active_not_superseded_not_internal(
    lifecycle: Lifecycle, superseded_by: str | None, kind: ClaimKind, recallable: bool
) -> None:
    """R-DOM-1: recall may return only active, unsuperseded, non-internal claims."""
    stored = claim(lifecycle=lifecycle, superseded_by=superseded_by, kind=kind)
    assert stored.is_recallable is recallable


_VECTORS = EmbeddingIdentity(provider="p", model="m-v2", dim=4)


@pytest.mark.parametrize(
    ("state", "identity", "ready"),
    [
        (EmbeddingState.READY, _VECTORS, True),
        (EmbeddingState.READY, EmbeddingIdentity(provider="p", model="m-v1", dim=4), False),
        (EmbeddingState.READY, EmbeddingIdentity(provider="p", model="m-v2", dim=8), False),
        (EmbeddingState.ERROR, _VECTORS, False),
        (EmbeddingState.PENDING, None, False),
    ],
)
def test_a_claim_is_ready_only_in_the_identity_it_was_embedded_with(
    state: EmbeddingState, identity: EmbeddingIdentity | None, ready: bool
) -> None:
    """R-READ-3: a vector hit counts only while its row holds that namespace's vector."""
    assert claim(embedding_state=state, embedding=identity).is_ready_in(_VECTORS) is ready


def test_only_persona_and_working_are_internal_kinds() -> None:
    """R-DOM-1: persona and working rows are internal projections; the rest are claims."""
    assert {kind for kind in ClaimKind if kind.is_internal} == {
        ClaimKind.PERSONA,
        ClaimKind.WORKING,
    }
    assert {kind.value for kind in ClaimKind} == {
        "working",
        "episodic",
        "semantic",
        "persona",
        "reflection",
    }


@pytest.mark.parametrize("kind", [ClaimKind.PERSONA, ClaimKind.WORKING])
def test_internal_kinds_refuse_narrow_scope(kind: ClaimKind) -> None:
    """R-DOM-1, R-SCOPE-2: persona/working rows live in Agent scope only."""
    with pytest.raises(ValidationError) as caught:
        draft(kind=kind, scope=Scope.session("s1"))
    assert caught.value.field == "scope"
    assert draft(kind=kind).scope == Scope.agent()


@pytest.mark.parametrize("kind", [ClaimKind.PERSONA, ClaimKind.WORKING])
def test_internal_kinds_refuse_temporal_metadata(kind: ClaimKind) -> None:
    """R-DOM-1, R-TIME-4: persona/working rows are atemporal."""
    with pytest.raises(ValidationError) as caught:
        draft(kind=kind, temporal=STATE)
    assert caught.value.field == "temporal"


def test_ordinary_kinds_accept_narrow_scope_and_temporal_metadata() -> None:
    """R-DOM-1: semantic/episodic claims may be scoped and time-bound."""
    accepted = draft(kind="episodic", scope=Scope.project("p1"), temporal=STATE)
    assert accepted.kind is ClaimKind.EPISODIC
    assert accepted.scope == Scope.project("p1")


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_blank_content_is_rejected(content: str) -> None:
    """R-DOM-4: a claim must say something."""
    with pytest.raises(ValidationError) as caught:
        draft(content=content)
    assert caught.value.field == "content"


def test_manual_content_is_bounded_in_code_points() -> None:
    """R-DOM-4: manual/tool content is at most 12,000 code points (CJK counted per point)."""
    at_limit = "猫" * MAX_MANUAL_CONTENT_CODE_POINTS
    assert draft(content=at_limit).content == at_limit
    with pytest.raises(ValidationError) as caught:
        draft(content=at_limit + "a")
    assert caught.value.field == "content"


def test_non_text_content_is_rejected() -> None:
    """R-DOM-4: content must be a string."""
    with pytest.raises(ValidationError) as caught:
        draft(content=42)
    assert caught.value.field == "content"


def test_invalid_agent_id_is_rejected_naming_the_field() -> None:
    """R-DOM-4, R-STORE-3: every draft names a valid owner."""
    with pytest.raises(ValidationError) as caught:
        draft(agent_id="../etc")
    assert caught.value.field == "agent_id"


@pytest.mark.parametrize("field", ["importance", "confidence"])
@pytest.mark.parametrize("bad", [-0.01, 1.01, float("nan"), float("inf"), True, False, "0.5"])
def test_importance_and_confidence_must_be_numbers_in_the_unit_interval(
    field: str, bad: object
) -> None:
    """R-DOM-2, R-DOM-4: NaN, booleans, strings and out-of-range values are refused."""
    with pytest.raises(ValidationError) as caught:
        draft(**{field: bad})
    assert caught.value.field == field


@pytest.mark.parametrize("good", [0, 0.0, 0.5, 1, 1.0])
def test_unit_interval_bounds_are_inclusive(good: float) -> None:
    """R-DOM-2: 0 and 1 are valid importance and confidence values."""
    accepted = draft(importance=good, confidence=good)
    assert accepted.importance == good
    assert accepted.confidence == good


def test_confidence_may_be_unknown() -> None:
    """R-DOM-2: a draft without fact confidence stores None, not a guessed number."""
    assert draft().confidence is None
    assert draft().importance == DEFAULT_IMPORTANCE


@pytest.mark.parametrize(
    ("category", "kind"),
    [
        (Category.TASK_OUTCOME, ClaimKind.EPISODIC),
        (Category.USER_PREFERENCE, ClaimKind.SEMANTIC),
        (Category.PROJECT_FACT, ClaimKind.SEMANTIC),
        (Category.HEURISTIC, ClaimKind.SEMANTIC),
        (Category.ANTI_PATTERN, ClaimKind.SEMANTIC),
    ],
)
def test_category_decides_the_kind(category: Category, kind: ClaimKind) -> None:
    """R-DOM-1: a task outcome is episodic; every other category is semantic."""
    assert kind_for_category(category) is kind


def test_no_category_keeps_the_default_kind() -> None:
    """R-DOM-1: without a category the caller's default kind stands."""
    assert kind_for_category(None) is ClaimKind.SEMANTIC
    assert kind_for_category(None, ClaimKind.REFLECTION) is ClaimKind.REFLECTION


def test_category_importance_floors_match_the_reference() -> None:
    """R-DOM-1: floors per category (reference §3.1)."""
    assert CATEGORY_IMPORTANCE_FLOORS == {
        Category.USER_PREFERENCE: 0.5,
        Category.PROJECT_FACT: 0.6,
        Category.TASK_OUTCOME: 0.55,
        Category.HEURISTIC: 0.5,
        Category.ANTI_PATTERN: 0.6,
    }


def test_effective_importance_is_raised_to_the_category_floor_never_lowered() -> None:
    """R-DOM-1: importance = max(stated, category floor)."""
    assert draft(category="project_fact", importance=0.2).effective_importance == 0.6
    assert draft(category="anti_pattern", importance=0.9).effective_importance == 0.9
    assert draft(category="task_outcome", importance=0.0).effective_importance == 0.55
    assert draft(importance=0.1).effective_importance == 0.1


def test_category_is_converted_from_its_value() -> None:
    """R-DOM-1: categories arrive as strings from extraction output."""
    assert draft(category="heuristic").category is Category.HEURISTIC


@pytest.mark.parametrize(("field", "bad"), [("kind", "fact"), ("category", "gossip")])
def test_unknown_kind_or_category_is_rejected_naming_the_field(field: str, bad: str) -> None:
    """R-DOM-4: closed vocabularies refuse unknown values with a typed error, not echoing it."""
    with pytest.raises(ValidationError) as caught:
        draft(**{field: bad})
    assert caught.value.field == field
    assert bad not in str(caught.value)


def test_embedding_identity_fingerprint_and_positive_dimension() -> None:
    """R-PROV-4: the storage fingerprint is `provider:model`; the dimension is positive."""
    identity = EmbeddingIdentity(provider="ollama", model="nomic-embed-text", dim=768)
    assert identity.fingerprint == "ollama:nomic-embed-text"
    with pytest.raises(ValueError, match="dim"):
        EmbeddingIdentity(provider="ollama", model="m", dim=0)
