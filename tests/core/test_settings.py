"""MemorySettings: SPEC §11 defaults in one validated object."""

from __future__ import annotations

import attrs
import pytest

from memory_core.domain.errors import ConfigError
from memory_core.settings import MemorySettings

SPEC_DEFAULTS = {
    "contribution_budget_tokens": 1_200,
    "directive_ceiling_tokens": 512,
    "directive_item_tokens": 192,
    "persona_floor_tokens": 128,
    "persona_ceiling_tokens": 320,
    "working_floor_tokens": 192,
    "working_ceiling_tokens": 480,
    "recall_reservation_tokens": 256,
    "top_k": 6,
    "rrf_k": 2,  # SPEC §11's 60 replaced by measurement (docs/evaluation.md)
    "weight_similarity": 0.6,
    "weight_recency": 0.25,
    "weight_importance": 0.15,
    "half_life_semantic_days": 14.0,
    "half_life_episodic_days": 30.0,
    "half_life_reflection_days": 60.0,
    "temporal_hard_filter_confidence": 0.8,
    "temporal_uncertain_factor": 0.65,
    "refill_growth": 4,
    "candidate_cap_per_source": 800,
    "breaker_failure_threshold": 2,
    "breaker_window_seconds": 30.0,
    "breaker_open_seconds": 30.0,
    "clear_batch_size": 256,
    "embedding_batch_size": 50,
    "extraction_chunk_tokens": 4_000,
    "extracted_claim_max_code_points": 2_000,
    "query_max_code_points": 2_000,
    "query_deadline_floor_ms": 800,
    "query_deadline_ceiling_ms": 2_000,
    "prepare_turn_deadline_ms": 4_000,
}


@pytest.mark.parametrize(("name", "value"), sorted(SPEC_DEFAULTS.items()))
def test_default_equals_the_spec(name: str, value: float) -> None:
    """R-READ-5, R-READ-2, R-READ-4, R-PROV-1, R-PROV-2, R-FORGET-3: SPEC §11 defaults."""
    assert getattr(MemorySettings(), name) == value


def test_every_setting_is_documented() -> None:
    """SPEC §11: every default is documented in the settings class itself."""
    for field in attrs.fields(MemorySettings):
        assert field.metadata.get("doc"), field.name


def test_settings_are_frozen() -> None:
    """SPEC §11: settings are a value; changing one means building a new object."""
    settings = MemorySettings()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        settings.top_k = 7  # type: ignore[misc]
    assert attrs.evolve(settings, top_k=7).top_k == 7


def test_contribution_budget_is_capped_at_8000_tokens() -> None:
    """R-READ-5: the contribution budget accepts 64..8000 tokens."""
    assert MemorySettings(contribution_budget_tokens=8_000).contribution_budget_tokens == 8_000
    assert MemorySettings(contribution_budget_tokens=64).contribution_budget_tokens == 64
    for bad in (8_001, 63):
        with pytest.raises(ValueError, match="contribution_budget_tokens"):
            MemorySettings(contribution_budget_tokens=bad)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"persona_floor_tokens": 321}, "persona_floor_tokens"),
        ({"working_floor_tokens": 481}, "working_floor_tokens"),
        ({"persona_ceiling_tokens": 100}, "persona_floor_tokens"),
        ({"query_deadline_floor_ms": 2_001}, "query_deadline_floor_ms"),
        ({"directive_item_tokens": 513}, "directive_item_tokens"),
    ],
)
def test_floor_above_ceiling_is_a_config_error_naming_the_key(
    overrides: dict[str, int], key: str
) -> None:
    """R-READ-5, R-PROV-1: a floor must not exceed its ceiling."""
    with pytest.raises(ConfigError, match=key):
        MemorySettings(**overrides)  # type: ignore[arg-type]


def test_floor_equal_to_ceiling_is_allowed() -> None:
    """R-READ-5: a fixed share (floor == ceiling) is a valid policy."""
    settings = MemorySettings(persona_floor_tokens=200, persona_ceiling_tokens=200)
    assert settings.persona_floor_tokens == settings.persona_ceiling_tokens == 200


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("top_k", 0),
        ("top_k", 101),
        ("weight_similarity", 1.5),
        ("temporal_uncertain_factor", -0.1),
        ("clear_batch_size", 257),
        ("refill_growth", 1),
        ("recall_reservation_tokens", -1),
        ("latency_headroom", 0.5),
    ],
)
def test_out_of_range_values_are_rejected_naming_the_key(name: str, bad: float) -> None:
    """SPEC §11: each value is range-checked on construction."""
    with pytest.raises(ValueError, match=name):
        MemorySettings(**{name: bad})  # type: ignore[arg-type]
