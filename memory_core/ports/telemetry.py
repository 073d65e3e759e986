"""The telemetry port: spans and metrics of memory's work, content-free by construction.

The core cannot import OpenTelemetry (R-ARCH-1), so it emits through this small seam and the
composition root hands it an implementation: the OpenTelemetry adapter when the `otel` extra
is installed, a no-op otherwise (docs/observability.md).

Content-free means every attribute value is an id, a count, a duration, a flag or a member
of a closed enum — never claim, directive, query or message text, never a provider's
options (R-PRIV-1, R-PROV-5). The type says so (`AttributeValue` has no room for a value
object), and callers pass nothing else; the adapter's tests check a turn's whole span tree.

Names follow the OpenTelemetry GenAI semantic conventions where they name the operation
(`gen_ai.operation.name` = `search_memory`, `update_memory`, `delete_memory`,
`delete_memory_store`; `gen_ai.memory.store.id`, `gen_ai.memory.record.id`, `gen_ai.agent.id`,
`gen_ai.conversation.id`), and ours (`agent_memory.*`) for what they do not name.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from enum import StrEnum
from typing import Protocol, runtime_checkable

__all__ = [
    "AttributeValue",
    "Attributes",
    "Metric",
    "SpanName",
    "Telemetry",
    "TelemetrySpan",
]

AttributeValue = str | bool | int | float
Attributes = Mapping[str, AttributeValue]


class SpanName(StrEnum):
    """Every span the core opens (provider calls are spanned by the adapter's wrappers)."""

    TURN = "agent_memory.turn"
    UPDATE = "agent_memory.update"
    FORGET = "agent_memory.forget"
    DELETE = "agent_memory.delete"
    CLEAR = "agent_memory.clear"
    RETIRE = "agent_memory.retire"
    INGESTION = "agent_memory.ingestion"


class Metric(StrEnum):
    """Every instrument the core records into; the adapter owns units and kinds."""

    TURN_DURATION = "agent_memory.turn.duration"  # histogram, seconds; by outcome
    STAGE_DURATION = "agent_memory.turn.stage.duration"  # histogram, seconds; by stage
    DEGRADATIONS = "agent_memory.degradations"  # counter; by degradation and operation
    INGESTION_DURATION = "agent_memory.ingestion.duration"  # histogram, seconds; by outcome
    OPERATION_DURATION = "agent_memory.operation.duration"  # histogram, seconds; by operation


@runtime_checkable
class TelemetrySpan(Protocol):
    """One open span."""

    def set(self, attributes: Attributes) -> None:
        """Add attributes learnt during the operation (counts, the outcome)."""
        ...

    def failed(self, error_type: str) -> None:
        """Mark the span an error, naming only the exception's type (`error.type`)."""
        ...

    def stage(
        self, name: str, *, start_ms: float, duration_ms: float, attributes: Attributes
    ) -> None:
        """A child span for a stage the caller timed itself: it began `start_ms` after
        this span began and lasted `duration_ms`."""
        ...


@runtime_checkable
class Telemetry(Protocol):
    def span(self, name: SpanName, attributes: Attributes) -> AbstractContextManager[TelemetrySpan]:
        """Open a span, the current one's child; it ends when the block exits, failed if it
        exits with an exception (of which only the type is recorded)."""
        ...

    def completed(self, name: SpanName, *, duration_ms: float, attributes: Attributes) -> None:
        """A span for work that just ended, timed by the caller (a background pass)."""
        ...

    def observe(self, metric: Metric, value: float, attributes: Attributes) -> None:
        """Record one value of a histogram (durations in seconds)."""
        ...

    def count(self, metric: Metric, attributes: Attributes) -> None:
        """Add one to a counter."""
        ...
