"""Background maintenance: scheduling, the model-call budget of a heavy pass, merging,
archiving, audit pruning, reflection and persona drafts (R-MAINT-1/2)."""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.settings.fields import doc, non_negative, positive, unit

__all__ = ["MaintenanceSettings"]


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class MaintenanceSettings:
    maintenance_arming_seconds: float = attrs.field(
        default=60.0,
        validator=non_negative,
        metadata=doc("After start, how long maintenance waits before arming its first passes."),
    )
    maintenance_startup_delay_seconds: float = attrs.field(
        default=300.0,
        validator=non_negative,
        metadata=doc("After arming, the delay of the first agent's startup pass."),
    )
    maintenance_stagger_seconds: float = attrs.field(
        default=5.0,
        validator=non_negative,
        metadata=doc("Extra delay of each further agent's startup pass."),
    )
    maintenance_debounce_seconds: float = attrs.field(
        default=300.0,
        validator=non_negative,
        metadata=doc("Quiet time after an agent's last write before its maintenance pass."),
    )
    maintenance_heavy_cooldown_seconds: float = attrs.field(
        default=21_600.0,
        validator=non_negative,
        metadata=doc("Least time between two completed heavy (model) passes of an agent."),
    )
    maintenance_failure_cooldown_seconds: float = attrs.field(
        default=1_800.0,
        validator=non_negative,
        metadata=doc("After a heavy pass whose every model call failed, heavy passes wait this."),
    )
    maintenance_concurrency: int = attrs.field(
        default=2,
        validator=[positive, attrs.validators.le(64)],
        metadata=doc("Agents whose maintenance passes may run at once (1..64)."),
    )
    maintenance_llm_calls: int = attrs.field(
        default=8,
        validator=non_negative,
        metadata=doc("Model calls one heavy pass may make in all."),
    )
    maintenance_merge_llm_calls: int = attrs.field(
        default=2,
        validator=non_negative,
        metadata=doc("Model calls one heavy pass may spend on merge decisions."),
    )
    maintenance_challenge_llm_calls: int = attrs.field(
        default=4,
        validator=non_negative,
        metadata=doc("Model calls one heavy pass may spend resolving conflicts."),
    )
    maintenance_reflection_llm_calls: int = attrs.field(
        default=1,
        validator=non_negative,
        metadata=doc("Model calls one heavy pass may spend on reflection."),
    )
    maintenance_persona_llm_calls: int = attrs.field(
        default=1,
        validator=non_negative,
        metadata=doc("Model calls one heavy pass may spend on a persona draft."),
    )
    maintenance_input_tokens: int = attrs.field(
        default=24_000,
        validator=positive,
        metadata=doc("Estimated input tokens one heavy pass may send to the model."),
    )
    maintenance_seed_batch: int = attrs.field(
        default=64,
        validator=[positive, attrs.validators.le(256)],
        metadata=doc("Dirty seeds one pass takes (1..256)."),
    )
    maintenance_neighbours: int = attrs.field(
        default=6,
        validator=[positive, attrs.validators.le(64)],
        metadata=doc("Same-agent vector neighbours read per seed when looking for a duplicate."),
    )
    merge_similarity_threshold: float = attrs.field(
        default=0.85,
        validator=unit,
        metadata=doc("Least cosine similarity of a neighbour considered for a merge."),
    )
    maintenance_archive_batch: int = attrs.field(
        default=256,
        validator=positive,
        metadata=doc("Stale claims one pass may archive."),
    )
    audit_keep_per_agent: int = attrs.field(
        default=10_000,
        validator=non_negative,
        metadata=doc("Newest operational audit events kept per agent."),
    )
    audit_prune_batch: int = attrs.field(
        default=500,
        validator=positive,
        metadata=doc("Operational audit events one pass may delete."),
    )
    maintenance_pass_seconds: float = attrs.field(
        default=120.0,
        validator=positive,
        metadata=doc("Deadline of one maintenance pass of one agent."),
    )
    reflection_min_claims: int = attrs.field(
        default=3,
        validator=positive,
        metadata=doc("Live Agent-scope claims reflection and persona drafts need at least."),
    )
    reflection_importance_sum: float = attrs.field(
        default=5.0,
        validator=non_negative,
        metadata=doc("Importance of claims newer than the watermark that triggers reflection."),
    )
    reflection_inputs: int = attrs.field(
        default=20,
        validator=[positive, attrs.validators.le(200)],
        metadata=doc("Most claims one reflection or persona prompt shows (1..200)."),
    )
    persona_evolution_enabled: bool = attrs.field(
        default=False,
        validator=attrs.validators.instance_of(bool),
        metadata=doc(
            "Heavy passes draft self-model updates (a draft changes nothing until approved)."
        ),
    )
    maintenance_drain_seconds: float = attrs.field(
        default=5.0,
        validator=positive,
        metadata=doc("How long stopping maintenance waits for passes in flight before failing."),
    )

    def _check_maintenance(self) -> None:
        steps = (
            "maintenance_merge_llm_calls",
            "maintenance_challenge_llm_calls",
            "maintenance_reflection_llm_calls",
            "maintenance_persona_llm_calls",
        )
        for step in steps:
            if getattr(self, step) > self.maintenance_llm_calls:
                raise ConfigError(f"{step} must not exceed maintenance_llm_calls")
