"""Which telemetry a memory gets: OpenTelemetry when the `otel` extra is installed, else none.

With the extra, spans and metrics go to the host's global tracer and meter providers (the
API's no-ops until the host configures an SDK), so installing it costs nothing until a host
asks for traces; `overrides={"telemetry": OtelTelemetry(tracer_provider=..., ...)}` points
one memory at providers of its own. Without the extra, `NoTelemetry` drops everything.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memory_core.ports.providers import EmbeddingProvider, TextProvider
from memory_core.ports.telemetry import Attributes, Metric, SpanName, Telemetry

__all__ = ["NoTelemetry", "default_telemetry", "traced_providers"]


class _NoSpan:
    def set(self, attributes: Attributes) -> None:
        del attributes  # nothing records it: the `otel` extra is not installed

    def failed(self, error_type: str) -> None:
        del error_type

    def stage(
        self, name: str, *, start_ms: float, duration_ms: float, attributes: Attributes
    ) -> None:
        del name, start_ms, duration_ms, attributes


class NoTelemetry:
    """The telemetry port when nothing listens: every call returns at once."""

    @contextlib.contextmanager
    def span(self, name: SpanName, attributes: Attributes) -> Iterator[_NoSpan]:
        yield _NoSpan()

    def completed(self, name: SpanName, *, duration_ms: float, attributes: Attributes) -> None:
        del name, duration_ms, attributes

    def observe(self, metric: Metric, value: float, attributes: Attributes) -> None:
        del metric, value, attributes

    def count(self, metric: Metric, attributes: Attributes) -> None:
        del metric, attributes


def default_telemetry() -> Telemetry:
    try:
        from memory_adapters.otel_telemetry import OtelTelemetry
    except ImportError:  # the `otel` extra is not installed
        return NoTelemetry()
    return OtelTelemetry()


def traced_providers(
    telemetry: Telemetry, embedder: EmbeddingProvider | None, text: TextProvider | None
) -> tuple[EmbeddingProvider | None, TextProvider | None]:
    """The providers with their calls spanned, when the telemetry is OpenTelemetry's."""
    try:
        from memory_adapters.otel_telemetry import OtelTelemetry
    except ImportError:
        return embedder, text
    if not isinstance(telemetry, OtelTelemetry):
        return embedder, text
    return (
        None if embedder is None else telemetry.traced_embedder(embedder),
        None if text is None else telemetry.traced_text(text),
    )
