"""OpenTelemetry behind the telemetry port (the `otel` extra; docs/observability.md).

`OtelTelemetry` implements `memory_core.ports.telemetry.Telemetry` on the OpenTelemetry API;
`TracedEmbeddingProvider` / `TracedTextProvider` span every provider call after the GenAI
semantic conventions. Spans and metrics go to whatever tracer and meter providers the host
configured — with none configured, the API's own no-op providers take them.
"""

from __future__ import annotations

from memory_adapters.otel_telemetry.providers import (
    INSTRUMENTATION_NAME,
    TracedEmbeddingProvider,
    TracedTextProvider,
)
from memory_adapters.otel_telemetry.telemetry import OtelTelemetry

__all__ = [
    "INSTRUMENTATION_NAME",
    "OtelTelemetry",
    "TracedEmbeddingProvider",
    "TracedTextProvider",
]
