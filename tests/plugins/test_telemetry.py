"""OpenTelemetry end to end (issue 16; R-READ-5 content-free diagnostics, R-PRIV-1): with the
`otel` extra and the SDK's in-memory exporters, one turn yields its span tree — the turn,
its stages with their timings, the query embedding's provider call — and metrics, and no
attribute anywhere holds claim or query text. Ingestion passes, forget and clear are spanned
too. Without the extra, memory runs on a no-op telemetry."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from memory_adapters.otel_telemetry import OtelTelemetry
from memory_adapters.tapes import InMemoryTape
from memory_core.ports.telemetry import SpanName
from memory_core.services.memory import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_plugins.api import open_memory_async
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.telemetry import NoTelemetry, default_telemetry

A = "assistant"
# Words that appear nowhere but in the stored fact and the user's message.
FACT = "The user's sailboat Quixotrana is moored in Zbrvelhaven harbour."
QUERY = "Where is my sailboat Quixotrana moored?"
SECRET_WORDS = ("Quixotrana", "Zbrvelhaven", "sailboat", "moored", "harbour")
REPLY = (
    "Thanks for telling me, I will keep that in mind. Is there anything else I can help you "
    "with today, for example planning, writing, or questions about one of your projects?"
)
STAGES = {"keywords", "query_embedding", "vector", "revalidation", "assembly"}


class Otel:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.telemetry = OtelTelemetry(
            tracer_provider=tracer_provider,
            meter_provider=MeterProvider(metric_readers=[self.reader]),
        )

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans.get_finished_spans() if span.name == name]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        return [
            span
            for span in self.spans.get_finished_spans()
            if span.parent is not None and span.parent.span_id == parent.context.span_id
        ]

    def resources(self) -> tuple[Any, ...]:
        data = self.reader.get_metrics_data()  # None until something was recorded
        return tuple(data.resource_metrics) if data is not None else ()

    def points(self, metric: str) -> list[Any]:
        return [
            point
            for resource in self.resources()
            for scope in resource.scope_metrics
            for found in scope.metrics
            if found.name == metric
            for point in found.data.data_points
        ]

    def assert_content_free(self) -> None:
        """No attribute value of any span, nor any metric attribute, quotes the content."""
        values = [
            str(value)
            for span in self.spans.get_finished_spans()
            for value in (span.attributes or {}).values()
        ]
        values += [
            str(value)
            for resource in self.resources()
            for scope in resource.scope_metrics
            for metric in scope.metrics
            for point in metric.data.data_points
            for value in point.attributes.values()
        ]
        assert values, "nothing was recorded"
        leaks = [v for v in values if any(word.lower() in v.lower() for word in SECRET_WORDS)]
        assert leaks == []


@pytest.fixture
def otel() -> Iterator[Otel]:
    yield Otel()


def _config() -> MemoryConfig:
    plugins = {**MemoryConfig().plugins, "embedding_provider": PluginChoice(name="hashing")}
    return MemoryConfig(plugins=plugins)


async def _open(tmp_path: Path, otel: Otel | None, tape: object | None = None) -> MemoryService:
    overrides = {} if otel is None else {"telemetry": otel.telemetry}
    return await open_memory_async(
        tmp_path / "data", config=_config(), tape=tape, overrides=overrides
    )


def test_one_turn_yields_its_span_tree_with_stage_timings_and_no_text(
    tmp_path: Path, otel: Otel
) -> None:
    """The turn span has the five stage spans and the query embedding as children, stage
    timings as attributes, GenAI memory names; nothing in any attribute is content."""

    async def go() -> str | None:
        memory = await _open(tmp_path, otel)
        await memory.remember(A, FACT, session_id="chat-1")
        assert await memory.warm(A)
        otel.spans.clear()
        turn = await memory.session(A, "chat-1").prepare_turn("m1", QUERY)
        await memory.aclose()
        return turn.text

    assert "Quixotrana" in (asyncio.run(go()) or "")  # the content was there to leak

    (turn,) = otel.named("agent_memory.turn")
    attributes = dict(turn.attributes or {})
    assert attributes["gen_ai.operation.name"] == "search_memory"
    assert attributes["gen_ai.memory.store.id"] == A
    assert attributes["gen_ai.conversation.id"] == "chat-1"
    assert attributes["agent_memory.turn.outcome"] == "assembled"
    assert (
        attributes["agent_memory.memories.selected"] + attributes["agent_memory.memories.dropped"]
        >= 1
    )
    assert attributes["agent_memory.stage.total_ms"] > 0
    assert attributes["agent_memory.vector.candidates"] >= 1
    children = otel.children(turn)
    stages = {
        span.attributes["agent_memory.stage"]: span
        for span in children
        if span.attributes and "agent_memory.stage" in span.attributes
    }
    assert set(stages) == STAGES
    for name, span in stages.items():
        assert span.start_time >= turn.start_time and span.end_time <= turn.end_time
        assert span.attributes["agent_memory.stage.duration_ms"] == pytest.approx(
            attributes[f"agent_memory.stage.{name}_ms"], abs=1e-3
        )
    (embedding,) = [span for span in children if span.name.startswith("embeddings ")]
    assert embedding.attributes["gen_ai.operation.name"] == "embeddings"
    assert embedding.attributes["agent_memory.embedding.purpose"] == "query-embedding"
    assert embedding.attributes["gen_ai.embeddings.dimension.count"] > 0

    (duration,) = otel.points("agent_memory.turn.duration")
    assert duration.count == 1 and duration.attributes["agent_memory.turn.outcome"] == "assembled"
    assert {
        p.attributes["agent_memory.stage"] for p in otel.points("agent_memory.turn.stage.duration")
    } == STAGES
    assert otel.points("gen_ai.client.operation.duration")
    otel.assert_content_free()


def test_a_cold_turn_counts_its_degradation(tmp_path: Path, otel: Otel) -> None:
    """Degradation counters: a turn before the vectors are warm counts `vectorCold`."""

    async def go() -> None:
        memory = await _open(tmp_path, otel)
        await memory.remember(A, FACT)
        memory.index.invalidate(A)  # cold, whatever the background warm-up did
        await memory.session(A, "chat-1").prepare_turn("m1", QUERY)
        await memory.aclose()

    asyncio.run(go())
    counted = {
        (p.attributes["agent_memory.degradation"], p.attributes["agent_memory.operation"]): p.value
        for p in otel.points("agent_memory.degradations")
    }
    assert counted[("vectorCold", "turn")] >= 1
    otel.assert_content_free()


def test_ingestion_passes_forget_and_clear_are_spanned(tmp_path: Path, otel: Otel) -> None:
    """A settled turn's pass is a span with its outcome and counts; forget, delete and clear
    are GenAI `delete_memory` spans naming the record or the store, never the text."""

    async def go() -> None:
        tape = InMemoryTape()
        memory = await _open(tmp_path, otel, tape)
        runtime = memory.session(A, "chat-1")
        tape.append_message("chat-1", "user", "I live in Zbrvelhaven these days.")
        tape.append_message("chat-1", "assistant", REPLY)
        assert runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        await runtime.drain()
        stored = await memory.remember(A, FACT)
        assert stored.claim_id is not None
        await memory.forget(A, stored.claim_id)
        await memory.delete(A, stored.claim_id)
        await memory.clear(A)
        await memory.aclose()

    asyncio.run(go())
    (ingestion,) = otel.named("agent_memory.ingestion")
    assert ingestion.attributes["agent_memory.ingestion.outcome"] == "completed"
    assert ingestion.attributes["agent_memory.ingestion.stored"] >= 1
    assert ingestion.end_time > ingestion.start_time
    assert otel.points("agent_memory.ingestion.duration")
    for name, operation in (
        ("agent_memory.forget", "delete_memory"),
        ("agent_memory.delete", "delete_memory"),
        ("agent_memory.clear", "delete_memory"),
    ):
        (span,) = otel.named(name)
        assert span.attributes["gen_ai.operation.name"] == operation
        assert span.status.status_code is not StatusCode.ERROR
    assert otel.named("agent_memory.clear")[0].attributes["agent_memory.clear.removed"] >= 1
    operations = {
        p.attributes["agent_memory.operation"]
        for p in otel.points("agent_memory.operation.duration")
    }
    assert {"agent_memory.forget", "agent_memory.delete", "agent_memory.clear"} <= operations
    otel.assert_content_free()


def test_a_failed_operation_is_an_error_span_naming_only_the_type(
    tmp_path: Path, otel: Otel
) -> None:
    """`error.type` is the exception's type; its message (which may quote input) is not
    recorded, nor is an exception event."""

    async def go() -> None:
        memory = await _open(tmp_path, otel)
        with pytest.raises(Exception, match="no claim"):
            await memory.delete(A, "mem-Quixotrana")
        await memory.aclose()

    asyncio.run(go())
    (span,) = otel.named("agent_memory.delete")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "NotFound"
    assert span.events == ()


def test_without_the_extra_memory_runs_on_a_no_op(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `otel` extra: the default telemetry is the no-op and a turn still runs."""
    monkeypatch.setitem(sys.modules, "memory_adapters.otel_telemetry", None)
    assert isinstance(default_telemetry(), NoTelemetry)

    async def go() -> None:
        memory = await _open(tmp_path, None)
        await memory.remember(A, FACT)
        turn = await memory.session(A, "chat-1").prepare_turn("m1", QUERY)
        assert "Quixotrana" in (turn.text or "")
        await memory.aclose()

    asyncio.run(go())


def test_the_content_check_sees_a_leak(otel: Otel) -> None:
    """The check above can fail: a span quoting the fact is caught."""
    with otel.telemetry.span(SpanName.TURN, {"agent_memory.note": FACT}):
        pass
    with pytest.raises(AssertionError):
        otel.assert_content_free()
