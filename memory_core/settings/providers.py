"""The provider gateway: deadlines, the breaker, concurrency and answer limits of every
embedding and text-provider call (R-PROV-1, R-PROV-2)."""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.settings.fields import doc, positive, unit

__all__ = ["ProviderSettings"]


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class ProviderSettings:
    query_deadline_floor_ms: int = attrs.field(
        default=800,
        validator=positive,
        metadata=doc("Lower clamp of the query-embedding deadline."),
    )
    query_deadline_ceiling_ms: int = attrs.field(
        default=2_000,
        validator=positive,
        metadata=doc("Upper clamp; also the relaxed deadline after a miss."),
    )
    latency_smoothing: float = attrs.field(
        default=0.25, validator=unit, metadata=doc("EWMA factor of observed embedding latency.")
    )
    latency_headroom: float = attrs.field(
        default=1.75,
        validator=attrs.validators.ge(1.0),
        metadata=doc("Multiplier from smoothed latency to deadline."),
    )
    breaker_failure_threshold: int = attrs.field(
        default=2,
        validator=positive,
        metadata=doc("Failures within the window that open the breaker."),
    )
    breaker_window_seconds: float = attrs.field(
        default=30.0, validator=positive, metadata=doc("Window in which failures are counted.")
    )
    breaker_open_seconds: float = attrs.field(
        default=30.0, validator=positive, metadata=doc("Cooldown before one half-open probe.")
    )
    query_max_code_points: int = attrs.field(
        default=2_000,
        validator=positive,
        metadata=doc("Code points of the user message sent for query embedding (R-READ-2)."),
    )
    embedding_batch_size: int = attrs.field(
        default=50, validator=positive, metadata=doc("Texts per embedding request.")
    )
    provider_dimension_seconds: float = attrs.field(
        default=15.0,
        validator=positive,
        metadata=doc("Deadline of the call that learns an embedder's dimension."),
    )
    embedding_batch_seconds: float = attrs.field(
        default=30.0, validator=positive, metadata=doc("Deadline of one embedding batch.")
    )
    embedding_warm_seconds: float = attrs.field(
        default=30.0, validator=positive, metadata=doc("Deadline of an embedder warm-up call.")
    )
    text_call_seconds: float = attrs.field(
        default=60.0, validator=positive, metadata=doc("Deadline of one text-provider call.")
    )
    provider_calls_per_key: int = attrs.field(
        default=2,
        validator=positive,
        metadata=doc("Provider calls in flight per agent, purpose, provider and model."),
    )
    provider_calls_total: int = attrs.field(
        default=64, validator=positive, metadata=doc("Provider calls in flight in all.")
    )
    latency_samples: int = attrs.field(
        default=256,
        validator=positive,
        metadata=doc("Recent provider latencies kept for diagnostics."),
    )
    embedding_response_max_bytes: int = attrs.field(
        # 50 texts x 8,192 values x 40 bytes: room for the widest common models' full batch.
        default=16_777_216,
        validator=positive,
        metadata=doc(
            "Most bytes of one embedding answer; once the dimension is known, also at most "
            "64 bytes per expected value plus 64 KiB."
        ),
    )
    text_response_max_bytes: int = attrs.field(
        default=1_048_576,
        validator=positive,
        metadata=doc("Most bytes of one text-provider answer; reading stops there."),
    )

    def _check_providers(self) -> None:
        if self.query_deadline_floor_ms > self.query_deadline_ceiling_ms:
            raise ConfigError("query_deadline_floor_ms must not exceed query_deadline_ceiling_ms")
