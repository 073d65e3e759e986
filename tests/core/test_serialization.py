"""The domain JSON boundary: round trips and field-naming errors (R-DOM-4)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_core.domain.claims import (
    Category,
    Claim,
    ClaimKind,
    ClaimSource,
    EmbeddingIdentity,
    EmbeddingState,
    Lifecycle,
)
from memory_core.domain.directives import (
    Directive,
    DirectiveKind,
    DirectiveSource,
    DirectiveStatus,
)
from memory_core.domain.errors import ScopeError, TemporalError, ValidationError
from memory_core.domain.scope import Scope
from memory_core.domain.serialization import structure, unstructure
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata

T0 = datetime(2026, 3, 1, 12, 30, 15, 250_000, tzinfo=UTC)

TEMPORAL = TemporalMetadata(
    kind=TemporalKind.PLAN,
    interval=Interval(valid_from=T0, valid_until=T0 + timedelta(days=3)),
    precision=Precision.DAY,
    timezone="Asia/Shanghai",
    confidence=0.75,
)

CLAIM = Claim(
    id="c1",
    agent_id="agent-1",
    kind=ClaimKind.EPISODIC,
    content="Flying to Shanghai",
    canonical_content="Flying to Shanghai",
    category=Category.TASK_OUTCOME,
    importance=0.55,
    confidence=0.9,
    temporal=TEMPORAL,
    scope=Scope.session("s1"),
    provenance_key="v3:episodic:" + "a" * 64,
    source=ClaimSource(
        session_id="s1", entry_ids=("e1", "e2"), first_order_seq=3, last_order_seq=4
    ),
    lifecycle=Lifecycle.ACTIVE,
    embedding_state=EmbeddingState.READY,
    embedding=EmbeddingIdentity(provider="ollama", model="nomic", dim=768),
    revision=3,
    created_at=T0,
    updated_at=T0 + timedelta(hours=1),
    last_accessed_at=T0 + timedelta(hours=2),
    access_count=5,
)

DIRECTIVE = Directive(
    id="d1",
    agent_id="agent-1",
    kind=DirectiveKind.SUPPRESS_TOPIC,
    status=DirectiveStatus.ACTIVE,
    source=DirectiveSource.EXPLICIT_USER,
    content="Do not mention my ex",
    topic="my ex",
    identity_hash="f" * 64,
    created_at=T0,
    updated_at=T0,
)


def through_json(value: object) -> Any:
    return json.loads(json.dumps(unstructure(value)))


def test_claim_round_trips_through_json_text() -> None:
    """R-DOM-4: a claim survives unstructure → JSON text → structure unchanged."""
    assert structure(through_json(CLAIM), Claim) == CLAIM


def test_temporal_metadata_round_trips() -> None:
    """R-DOM-4, R-TIME-1: interval, precision, zone and temporal confidence survive."""
    assert structure(through_json(TEMPORAL), TemporalMetadata) == TEMPORAL
    assert structure(through_json(TemporalMetadata()), TemporalMetadata) == TemporalMetadata()


def test_directive_round_trips() -> None:
    """R-DOM-4: directives use the same converter."""
    assert structure(through_json(DIRECTIVE), Directive) == DIRECTIVE


def test_unstructured_values_are_plain_json_types() -> None:
    """R-DOM-4: enums travel as their values, datetimes as ISO-8601 UTC, tuples as lists."""
    data = unstructure(CLAIM)
    assert type(data["kind"]) is str
    assert data["kind"] == "episodic"
    assert type(data["lifecycle"]) is str
    assert type(data["scope"]["kind"]) is str
    assert type(data["temporal"]["precision"]) is str
    assert data["created_at"] == "2026-03-01T12:30:15.250000+00:00"
    assert data["source"]["entry_ids"] == ["e1", "e2"]
    assert type(unstructure(DIRECTIVE)["status"]) is str


def test_offset_datetimes_are_read_as_utc() -> None:
    """R-DOM-4: a non-UTC offset is converted, not rejected."""
    data = through_json(CLAIM)
    data["created_at"] = "2026-03-01T20:30:15.250000+08:00"
    assert structure(data, Claim).created_at == T0
    assert structure(data, Claim).created_at.tzinfo is UTC


def test_exact_precision_is_accepted_as_instant() -> None:
    """R-TIME-1: DeepChat's `exact` precision reads as `instant`."""
    data = through_json(TEMPORAL)
    data["precision"] = "exact"
    assert structure(data, TemporalMetadata).precision is Precision.INSTANT


def test_unknown_top_level_key_is_rejected_naming_it() -> None:
    """R-DOM-4: a misspelt or foreign key is refused, not silently dropped."""
    data = through_json(CLAIM)
    data["confidance"] = 0.5
    with pytest.raises(ValidationError) as caught:
        structure(data, Claim)
    assert caught.value.field == "Claim"
    assert "confidance" in caught.value.reason


def test_unknown_nested_key_names_the_nested_object() -> None:
    """R-DOM-4: the error path points into the nested value."""
    data = through_json(CLAIM)
    data["temporal"]["zone"] = "UTC"
    with pytest.raises(ValidationError) as caught:
        structure(data, Claim)
    assert caught.value.field == "Claim.temporal"
    assert "zone" in caught.value.reason


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("content",), None, "Claim.content"),
        (("content",), 5, "Claim.content"),
        (("revision",), "7", "Claim.revision"),
        (("revision",), 1.9, "Claim.revision"),
        (("revision",), True, "Claim.revision"),
        (("importance",), "0.5", "Claim.importance"),
        (("kind",), "fact", "Claim.kind"),
        (("lifecycle",), "deleted", "Claim.lifecycle"),
        (("source", "entry_ids"), "e1", "Claim.source.entry_ids"),
        (("source", "entry_ids"), ["e1", 2], "Claim.source.entry_ids[1]"),
        (("created_at",), "yesterday", "Claim.created_at"),
        (("created_at",), "2026-03-01T12:30:15", "Claim.created_at"),
        (("embedding", "dim"), "768", "Claim.embedding.dim"),
    ],
)
def test_wrong_types_are_rejected_naming_the_field(
    path: tuple[str, ...], value: object, field: str
) -> None:
    """R-DOM-4: wrong types are refused, never coerced (None is not "None", 1.9 is not 1)."""
    data = through_json(CLAIM)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ValidationError) as caught:
        structure(data, Claim)
    assert caught.value.field == field


def test_missing_required_field_is_named() -> None:
    """R-DOM-4: a required field that is absent is named."""
    data = through_json(CLAIM)
    del data["content"]
    with pytest.raises(ValidationError) as caught:
        structure(data, Claim)
    assert caught.value.field == "Claim.content"


def test_int_is_accepted_where_a_float_is_expected() -> None:
    """R-DOM-4: JSON has one number type; `1` is a valid importance."""
    data = through_json(CLAIM)
    data["importance"] = 1
    assert structure(data, Claim).importance == 1.0


def test_domain_rules_still_apply_when_structuring() -> None:
    """R-DOM-4: value invariants raise their own typed errors naming the field."""
    data = through_json(CLAIM)
    data["scope"] = {"kind": "agent", "scope_id": "s1"}
    with pytest.raises(ScopeError) as scope_error:
        structure(data, Claim)
    assert scope_error.value.field == "scope.scope_id"

    data = through_json(CLAIM)
    data["temporal"]["confidence"] = 1.5
    with pytest.raises(TemporalError) as temporal_error:
        structure(data, Claim)
    assert temporal_error.value.field == "temporal.confidence"


def test_suppress_topic_directive_without_topic_is_rejected() -> None:
    """R-DIR-2, R-DOM-4: directive invariants hold at the JSON boundary too."""
    data = through_json(DIRECTIVE)
    data["topic"] = None
    with pytest.raises(ValidationError) as caught:
        structure(data, Directive)
    assert caught.value.field == "topic"


def test_naive_datetime_alone_is_rejected() -> None:
    """R-DOM-4: a bare naive timestamp is refused, never guessed to be UTC."""
    with pytest.raises(ValidationError, match="timezone-aware"):
        structure("2026-03-01T12:30:15", datetime)
    assert structure("2026-03-01T12:30:15+00:00", datetime) == datetime(
        2026, 3, 1, 12, 30, 15, tzinfo=UTC
    )
