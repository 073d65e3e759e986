"""`OtelTelemetry` on the SDK's in-memory exporters: the port's calls become the spans and
instruments docs/observability.md names (timed children, caller-timed spans, counters)."""

from __future__ import annotations

import time

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from memory_adapters.otel_telemetry import INSTRUMENTATION_NAME, OtelTelemetry
from memory_core.ports.telemetry import Metric, SpanName, Telemetry


@pytest.fixture
def world() -> tuple[OtelTelemetry, InMemorySpanExporter, InMemoryMetricReader]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    telemetry = OtelTelemetry(
        tracer_provider=provider, meter_provider=MeterProvider(metric_readers=[reader])
    )
    return telemetry, spans, reader


def test_it_is_the_port(world) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(world[0], Telemetry)


def test_a_stage_is_a_child_placed_and_sized_as_the_caller_measured(world) -> None:  # type: ignore[no-untyped-def]
    telemetry, spans, _ = world
    with telemetry.span(SpanName.TURN, {"gen_ai.agent.id": "a"}) as span:
        span.stage("agent_memory.turn.keywords", start_ms=2.0, duration_ms=3.5, attributes={})
    stage, turn = spans.get_finished_spans()
    assert stage.parent is not None and stage.parent.span_id == turn.context.span_id
    assert stage.start_time - turn.start_time == 2_000_000
    assert stage.end_time - stage.start_time == 3_500_000
    assert turn.instrumentation_scope.name == INSTRUMENTATION_NAME


def test_a_completed_span_ends_now_and_lasted_what_the_caller_says(world) -> None:  # type: ignore[no-untyped-def]
    telemetry, spans, _ = world
    before = time.time_ns()
    telemetry.completed(
        SpanName.INGESTION, duration_ms=250.0, attributes={"error.type": "DeadlineExceeded"}
    )
    (span,) = spans.get_finished_spans()
    assert span.end_time >= before and span.end_time - span.start_time == 250_000_000
    assert span.status.status_code is StatusCode.ERROR  # an error type marks it failed


def test_an_exception_leaves_its_type_and_not_its_message(world) -> None:  # type: ignore[no-untyped-def]
    telemetry, spans, _ = world
    with pytest.raises(ValueError), telemetry.span(SpanName.CLEAR, {}):
        raise ValueError("the user's secret text")
    (span,) = spans.get_finished_spans()
    assert span.attributes["error.type"] == "ValueError"
    assert span.status.status_code is StatusCode.ERROR and span.status.description is None
    assert span.events == ()


def test_histograms_and_counters_record_into_their_instruments(world) -> None:  # type: ignore[no-untyped-def]
    telemetry, _, reader = world
    telemetry.observe(Metric.TURN_DURATION, 0.05, {"agent_memory.turn.outcome": "empty"})
    telemetry.count(Metric.DEGRADATIONS, {"agent_memory.degradation": "vectorCold"})
    telemetry.count(Metric.DEGRADATIONS, {"agent_memory.degradation": "vectorCold"})
    metrics = {
        metric.name: metric
        for resource in reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    (histogram,) = metrics[Metric.TURN_DURATION.value].data.data_points
    assert histogram.count == 1 and histogram.sum == pytest.approx(0.05)
    assert metrics[Metric.TURN_DURATION.value].unit == "s"
    (counter,) = metrics[Metric.DEGRADATIONS.value].data.data_points
    assert counter.value == 2


def test_a_turn_not_being_recorded_starts_no_stage_spans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R-READ-1: a host that samples a turn out (or runs no SDK) pays nothing for its stages:
    no child span is started under a span that records nothing."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    telemetry = OtelTelemetry(tracer_provider=TracerProvider(sampler=ALWAYS_OFF))
    started: list[str] = []
    tracer = telemetry._tracer
    start_span = tracer.start_span

    def counting(name: str, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        started.append(name)
        return start_span(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tracer, "start_span", counting)
    with telemetry.span(SpanName.TURN, {}) as span:
        span.stage("agent_memory.turn.keywords", start_ms=0.0, duration_ms=1.0, attributes={})
        span.set({"agent_memory.outcome": "empty"})
    assert "agent_memory.turn.keywords" not in started


@pytest.mark.parametrize("sdk", [False, True])
def test_spans_on_the_global_provider_start_only_once_an_sdk_is_set(
    monkeypatch: pytest.MonkeyPatch, sdk: bool
) -> None:
    """R-READ-1: before a host sets an SDK the API's global provider records nothing, so a
    turn's span starts no context (and its stages nothing); set, the same telemetry spans."""
    from opentelemetry import trace
    from opentelemetry.trace import ProxyTracerProvider

    from memory_adapters.otel_telemetry import providers

    spans = InMemorySpanExporter()
    real = TracerProvider()
    real.add_span_processor(SimpleSpanProcessor(spans))
    current = real if sdk else ProxyTracerProvider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: current)
    assert providers.untraced(None)() is not sdk
    assert providers.untraced(real)() is False  # a provider of its own always records
    telemetry = OtelTelemetry()
    monkeypatch.setattr(telemetry, "_tracer", real.get_tracer("t"))  # where spans would go
    with telemetry.span(SpanName.TURN, {}) as span:
        span.stage("agent_memory.turn.keywords", start_ms=0.0, duration_ms=1.0, attributes={})
    assert len(spans.get_finished_spans()) == (2 if sdk else 0)
