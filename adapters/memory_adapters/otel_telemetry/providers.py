"""Provider calls spanned after the GenAI semantic conventions (client spans).

`embed` is an `embeddings {model}` span (`gen_ai.operation.name` = `embeddings`), `complete`
a `chat {model}` span; both carry `gen_ai.provider.name` and `gen_ai.request.model`, and
their duration goes to `gen_ai.client.operation.duration` (seconds). Counts only: how many
texts, the dimension, the output's length in code points — never the texts, the prompt or
the answer (the conventions' content attributes are opt-in; we never opt in).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.metrics import Histogram, MeterProvider, get_meter
from opentelemetry.trace import (
    ProxyTracerProvider,
    SpanKind,
    Status,
    StatusCode,
    Tracer,
    TracerProvider,
)

from memory_core import __version__
from memory_core.ports.provider_wrappers import (
    HookedEmbeddingProvider,
    HookedTextProvider,
    ProviderCall,
    ProviderOperation,
)
from memory_core.ports.providers import EmbeddingProvider, TextProvider

__all__ = [
    "DURATION_BUCKETS",
    "INSTRUMENTATION_NAME",
    "TracedEmbeddingProvider",
    "TracedTextProvider",
    "untraced",
]

INSTRUMENTATION_NAME = "agent-memory"

# Bucket bounds of the duration histograms: the GenAI conventions' advice for
# `gen_ai.client.operation.duration`, which spans the same range (10 ms .. 80 s).
DURATION_BUCKETS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)

T = TypeVar("T")


def untraced(tracer_provider: TracerProvider | None) -> Callable[[], bool]:
    """Whether spans of a tracer from `tracer_provider` cannot be recorded right now: it is
    the global provider (None) and no SDK has been set as that yet. Starting a span that
    records nothing still attaches and detaches contexts, on every call of every turn."""
    if tracer_provider is not None:
        return lambda: False
    return lambda: isinstance(trace.get_tracer_provider(), ProxyTracerProvider)


OPERATION_DURATION = "gen_ai.client.operation.duration"


def _embedding_facts(vectors: Any) -> dict[str, str | int]:
    return {"gen_ai.embeddings.dimension.count": len(vectors[0])} if vectors else {}


def _completion_facts(text: Any) -> dict[str, str | int]:
    return {"agent_memory.output.code_points": len(text)}


class _Calls:
    """Spans and measures the calls of one provider: the wrappers' call hook."""

    def __init__(
        self,
        provider: EmbeddingProvider | TextProvider,
        tracer: Tracer | None,
        meter_provider: MeterProvider | None,
        idle: Callable[[], bool],
    ) -> None:
        self._idle = idle
        model = provider.model_id
        self._common = {"gen_ai.provider.name": provider.provider_id, "gen_ai.request.model": model}
        # The attributes every call of an operation shares, built once (the call path runs on
        # every turn's query embedding).
        self._by_operation = {
            operation: {"gen_ai.operation.name": operation, **self._common}
            for operation in ("embeddings", "chat")
        }
        self._tracer = tracer or trace.get_tracer(INSTRUMENTATION_NAME, __version__)
        meter = get_meter(INSTRUMENTATION_NAME, __version__, meter_provider=meter_provider)
        self._duration: Histogram = meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )

    async def around(self, call: ProviderCall, make: Callable[[], Awaitable[T]]) -> T:
        if call.operation is ProviderOperation.EMBED:
            assert call.purpose is not None
            operation = "embeddings"
            facts: Callable[[Any], dict[str, str | int]] = _embedding_facts
        elif call.operation is ProviderOperation.COMPLETE:
            operation, facts = "chat", _completion_facts
        else:
            return await make()  # dimension discovery is not a GenAI operation
        common = self._by_operation[operation]
        started = time.monotonic()
        error: str | None = None
        if self._idle():  # nothing can record the span: measure the call only
            try:
                return await make()
            except BaseException as exc:
                error = type(exc).__name__
                raise
            finally:
                self._measured(started, common, error)
        if call.operation is ProviderOperation.EMBED:
            assert call.purpose is not None
            attributes: dict[str, str | int] = {
                "agent_memory.embedding.purpose": call.purpose.value,
                "agent_memory.texts": call.texts,
            }
        else:
            attributes = {"agent_memory.messages": call.messages}
        with self._tracer.start_as_current_span(
            f"{operation} {self._common['gen_ai.request.model']}",
            kind=SpanKind.CLIENT,
            attributes={**common, **attributes},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await make()
            except BaseException as exc:
                error = type(exc).__name__
                span.set_attribute("error.type", error)
                span.set_status(Status(StatusCode.ERROR))
                raise
            else:
                span.set_attributes(facts(result))
                return result
            finally:
                self._measured(started, common, error)

    async def close(self, provider: EmbeddingProvider | TextProvider) -> None:
        await provider.aclose()

    def _measured(self, started: float, common: dict[str, str], error: str | None) -> None:
        # `common` is shared by every call and never changed: copied only to add the error.
        measured = {**common, "error.type": error} if error else common
        self._duration.record(time.monotonic() - started, measured)


class TracedEmbeddingProvider(HookedEmbeddingProvider):
    """An `EmbeddingProvider` whose calls are spanned; otherwise the wrapped one."""

    def __init__(
        self,
        inner: EmbeddingProvider,
        *,
        tracer: Tracer | None = None,
        meter_provider: MeterProvider | None = None,
        idle: Callable[[], bool] = lambda: False,  # True while nothing can record a span
    ) -> None:
        super().__init__(inner, _Calls(inner, tracer, meter_provider, idle))


class TracedTextProvider(HookedTextProvider):
    """A `TextProvider` whose calls are spanned; otherwise the wrapped one."""

    def __init__(
        self,
        inner: TextProvider,
        *,
        tracer: Tracer | None = None,
        meter_provider: MeterProvider | None = None,
        idle: Callable[[], bool] = lambda: False,  # True while nothing can record a span
    ) -> None:
        super().__init__(inner, _Calls(inner, tracer, meter_provider, idle))
