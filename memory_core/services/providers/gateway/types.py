"""The provider gateway's vocabulary: purposes, limits, results and diagnostics."""

from __future__ import annotations

from enum import StrEnum

import attrs

from memory_core.domain.claims import EmbeddingIdentity
from memory_core.settings import MemorySettings

__all__ = [
    "CapacityLimits",
    "EmbeddedBatch",
    "GatewayDiagnostics",
    "LatencySample",
    "PurposeTimeouts",
    "QueryDegradation",
    "QueryEmbedding",
    "TextPurpose",
]


class TextPurpose(StrEnum):
    EXTRACTION = "extraction"
    DECISION = "decision"
    MAINTENANCE = "maintenance"


class QueryDegradation(StrEnum):
    """Why a query embedding is missing; the read path records it and goes FTS-only."""

    TIMEOUT = "embeddingTimeout"
    ERROR = "embeddingError"
    CIRCUIT_OPEN = "embeddingCircuitOpen"
    CANCELLED = "cancelled"


@attrs.frozen(kw_only=True)
class PurposeTimeouts:
    """Fixed deadlines (seconds) of the non-query purposes; the caller's may only shorten them.
    Built from `MemorySettings`, which validates them."""

    dimension_seconds: float
    batch_seconds: float
    warm_seconds: float
    text_seconds: float

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> PurposeTimeouts:
        return cls(
            dimension_seconds=settings.provider_dimension_seconds,
            batch_seconds=settings.embedding_batch_seconds,
            warm_seconds=settings.embedding_warm_seconds,
            text_seconds=settings.text_call_seconds,
        )


@attrs.frozen(kw_only=True)
class CapacityLimits:
    """Provider calls in flight: per (agent, purpose, provider, model), and in all."""

    per_key: int
    total: int

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> CapacityLimits:
        return cls(per_key=settings.provider_calls_per_key, total=settings.provider_calls_total)


@attrs.frozen(kw_only=True)
class QueryEmbedding:
    """A query vector, or the reason there is none.

    `reason` is a closed vocabulary for diagnostics: deadline, cancelled, capacity,
    unavailable, response, circuitOpen, unconfigured — never a provider message.
    """

    vector: tuple[float, ...] | None
    identity: EmbeddingIdentity | None
    degradation: QueryDegradation | None = None
    reason: str | None = None
    deadline_ms: int = 0
    elapsed_ms: float = 0.0
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.vector is not None


@attrs.frozen(kw_only=True)
class EmbeddedBatch:
    identity: EmbeddingIdentity
    vectors: tuple[tuple[float, ...], ...]


@attrs.frozen(kw_only=True)
class LatencySample:
    purpose: str
    provider: str
    model: str
    elapsed_ms: float
    outcome: str  # ok, deadline, cancelled, failed


@attrs.frozen(kw_only=True)
class GatewayDiagnostics:
    """Content-free counters: (event, purpose) -> count, calls in flight, recent latencies."""

    counts: dict[tuple[str, str], int]
    in_flight: int
    latencies: tuple[LatencySample, ...]

    def total(self, event: str) -> int:
        return sum(n for (name, _), n in self.counts.items() if name == event)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: {"counts": {event: {purpose: n}}, "inFlight": n, "latencies": [...]}."""
        counts: dict[str, dict[str, int]] = {}
        for (event, purpose), n in sorted(self.counts.items()):
            counts.setdefault(event, {})[purpose] = n
        latencies = [attrs.asdict(sample) for sample in self.latencies]
        return {"counts": counts, "inFlight": self.in_flight, "latencies": latencies}
