"""`OtelTelemetry`: the telemetry port on the OpenTelemetry API.

Spans are INTERNAL spans of the `agent-memory` instrumentation scope, children of whatever
span is current (a host's request span, say), so a turn sits inside the host's own trace.
Errors set the span status to ERROR with `error.type` — the exception's type name only; an
exception's message may quote content, so it is never recorded (no `record_exception`).
Histograms are in seconds, as the semantic conventions want durations.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from opentelemetry import metrics, trace
from opentelemetry.metrics import Counter, Histogram, Meter, MeterProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from memory_adapters.otel_telemetry.providers import (
    DURATION_BUCKETS,
    INSTRUMENTATION_NAME,
    TracedEmbeddingProvider,
    TracedTextProvider,
    untraced,
)
from memory_core import __version__
from memory_core.ports.providers import EmbeddingProvider, TextProvider
from memory_core.ports.telemetry import Attributes, Metric, SpanName

__all__ = ["INSTRUMENTATION_NAME", "OtelSpan", "OtelTelemetry"]


_DESCRIPTIONS = {
    Metric.TURN_DURATION: "Duration of one turn's memory contribution",
    Metric.STAGE_DURATION: "Duration of one stage of a turn's retrieval and assembly",
    Metric.DEGRADATIONS: "Turns and recalls that ran on less than the full path, by reason",
    Metric.INGESTION_DURATION: "Duration of one background ingestion pass",
    Metric.OPERATION_DURATION: "Duration of one user-facing memory operation",
}


class OtelSpan:
    """The port's span on an OpenTelemetry span."""

    def __init__(self, span: Span, tracer: Tracer, started_ns: int) -> None:
        self._span = span
        self._tracer = tracer
        self._started_ns = started_ns

    def set(self, attributes: Attributes) -> None:
        if self._span.is_recording():
            self._span.set_attributes(dict(attributes))

    def failed(self, error_type: str) -> None:
        self._span.set_attribute("error.type", error_type)
        self._span.set_status(Status(StatusCode.ERROR))

    def stage(
        self, name: str, *, start_ms: float, duration_ms: float, attributes: Attributes
    ) -> None:
        # A turn not being traced (no SDK, or not sampled) costs its stages nothing: their
        # spans would be non-recording children of a non-recording parent.
        if not self._span.is_recording():
            return
        start = self._started_ns + int(start_ms * 1e6)
        child = self._tracer.start_span(
            name,
            context=trace.set_span_in_context(self._span),
            kind=SpanKind.INTERNAL,
            attributes={**attributes, "agent_memory.stage.duration_ms": round(duration_ms, 3)},
            start_time=start,
        )
        child.end(end_time=start + int(duration_ms * 1e6))


class OtelTelemetry:
    """Spans through `tracer_provider`, metrics through `meter_provider` (the global ones
    when None: the host's configuration, or the API's no-ops)."""

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self._tracer = trace.get_tracer(
            INSTRUMENTATION_NAME, __version__, tracer_provider=tracer_provider
        )
        self._idle = untraced(tracer_provider)
        self._meter_provider = meter_provider
        meter: Meter = metrics.get_meter(
            INSTRUMENTATION_NAME, __version__, meter_provider=meter_provider
        )
        self._histograms: dict[Metric, Histogram] = {}
        self._counters: dict[Metric, Counter] = {}
        for metric in Metric:
            if metric is Metric.DEGRADATIONS:
                self._counters[metric] = meter.create_counter(
                    metric.value, unit="{degradation}", description=_DESCRIPTIONS[metric]
                )
            else:
                self._histograms[metric] = meter.create_histogram(
                    metric.value,
                    unit="s",
                    description=_DESCRIPTIONS[metric],
                    explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
                )

    def traced_embedder(self, provider: EmbeddingProvider) -> EmbeddingProvider:
        """`provider` with each call spanned on this telemetry's providers."""
        return TracedEmbeddingProvider(
            provider, tracer=self._tracer, meter_provider=self._meter_provider, idle=self._idle
        )

    def traced_text(self, provider: TextProvider) -> TextProvider:
        return TracedTextProvider(
            provider, tracer=self._tracer, meter_provider=self._meter_provider, idle=self._idle
        )

    @contextlib.contextmanager
    def span(self, name: SpanName, attributes: Attributes) -> Iterator[OtelSpan]:
        started = time.time_ns()
        if self._idle():  # no SDK yet: a span that records nothing, without its contexts
            yield OtelSpan(trace.INVALID_SPAN, self._tracer, started)
            return
        with self._tracer.start_as_current_span(
            name.value,
            kind=SpanKind.INTERNAL,
            attributes=dict(attributes),
            start_time=started,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            handle = OtelSpan(span, self._tracer, started)
            try:
                yield handle
            except BaseException as exc:
                handle.failed(type(exc).__name__)
                raise

    def completed(self, name: SpanName, *, duration_ms: float, attributes: Attributes) -> None:
        ended = time.time_ns()
        span = self._tracer.start_span(
            name.value,
            kind=SpanKind.INTERNAL,
            attributes=dict(attributes),
            start_time=ended - int(duration_ms * 1e6),
        )
        if "error.type" in attributes:
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=ended)

    def observe(self, metric: Metric, value: float, attributes: Attributes) -> None:
        self._histograms[metric].record(value, dict(attributes))

    def count(self, metric: Metric, attributes: Attributes) -> None:
        self._counters[metric].add(1, dict(attributes))
