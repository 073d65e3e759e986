"""What the facade tells the telemetry port: the turn and its stages, ingestion passes, and
the user-facing operations (docs/observability.md).

Everything here is content-free: ids, counts, durations, outcomes and degradations — the
attributes are built from the manifest and the retrieval diagnostics, which hold no text
(R-READ-5), and from ingestion reports, which hold ids and counts (R-WRITE-6).

- `ObservedRuntime` is the session runtime with a span around each turn. The retrieval
  stages are timed by the read path itself (`StageTimings`); they become child spans laid
  end to end in pipeline order from the turn's start: their durations are measured, their
  starts are placed (the stages run one after another, so the gaps are the only error).
  Provider calls made inside the turn (the query embedding) are children of the turn span
  through the context the adapter propagates.
- `IngestionTimer` times background passes: a pass starts when its turn is admitted, or
  when the session's previous pass reported (a chain runs its passes one after another),
  and ends when it reports.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.clock import InfraClock
from memory_core.ports.telemetry import (
    Attributes,
    Metric,
    SpanName,
    Telemetry,
    TelemetrySpan,
)
from memory_core.services.read.runtime import ContributionOutcome, MemoryRuntime, TurnContribution
from memory_core.services.write.ingestion.types import (
    IngestionOutcome,
    IngestionReport,
    TurnOutcome,
)

__all__ = ["IngestionTimer", "ObservedRuntime", "memory_attributes", "timed_operation"]

# The stages of `StageTimings` in the order the read path runs them.
STAGES = ("keywords", "query_embedding", "vector", "revalidation", "assembly")

# Reports published at admission, before any pass ran: they take no time.
_REFUSALS = frozenset({IngestionOutcome.SUBAGENT, IngestionOutcome.NOT_ADMITTED})
# Outcomes after which the chain runs another pass at once.
_CONTINUED = frozenset({IngestionOutcome.PARTIAL, IngestionOutcome.SKIPPED})


def memory_attributes(operation: str, agent_id: str) -> dict[str, str]:
    """The GenAI conventions' names for a memory operation on the agent's store."""
    return {
        "gen_ai.operation.name": operation,
        "gen_ai.memory.store.id": agent_id,
        "gen_ai.agent.id": agent_id,
    }


@contextlib.contextmanager
def timed_operation(
    telemetry: Telemetry,
    clock: InfraClock,
    name: SpanName,
    attributes: Attributes,
) -> Iterator[TelemetrySpan]:
    """A span around one user-facing operation, and its duration in the operation
    histogram (by span name and outcome)."""
    started = clock.monotonic()
    outcome = "ok"
    try:
        with telemetry.span(name, attributes) as span:
            yield span
    except BaseException:
        outcome = "error"
        raise
    finally:
        telemetry.observe(
            Metric.OPERATION_DURATION,
            clock.monotonic() - started,
            {"agent_memory.operation": name.value, "agent_memory.outcome": outcome},
        )


class ObservedRuntime(MemoryRuntime):
    """A session runtime whose turns are spanned and measured."""

    def __init__(self, *, telemetry: Telemetry, timer: IngestionTimer, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._telemetry = telemetry
        self._timer = timer

    async def prepare_turn(
        self,
        message_id: str,
        user_text: str,
        *,
        deadline: Deadline | None = None,
        cancel: CancellationToken | None = None,
        budget_tokens: int | None = None,
    ) -> TurnContribution:
        attributes = {
            **memory_attributes("search_memory", self.agent_id),
            "gen_ai.conversation.id": self.session_id,
            "agent_memory.session.kind": self.kind.value,
        }
        started = self._infra.monotonic()
        with self._telemetry.span(SpanName.TURN, attributes) as span:
            turn = await super().prepare_turn(
                message_id, user_text, deadline=deadline, cancel=cancel, budget_tokens=budget_tokens
            )
            span.set(_turn_attributes(turn))
            timings = turn.manifest.timings
            if timings is not None and turn.outcome is not ContributionOutcome.REUSED:
                offset = 0.0
                for stage in STAGES:
                    duration = getattr(timings, stage)
                    span.stage(
                        f"agent_memory.turn.{stage}",
                        start_ms=offset,
                        duration_ms=duration,
                        attributes={"agent_memory.stage": stage},
                    )
                    self._telemetry.observe(
                        Metric.STAGE_DURATION, duration / 1000, {"agent_memory.stage": stage}
                    )
                    offset += duration
        self._telemetry.observe(
            Metric.TURN_DURATION,
            self._infra.monotonic() - started,
            {"agent_memory.turn.outcome": turn.outcome.value},
        )
        degradations = turn.retrieval.degradations if turn.retrieval else ()
        for degradation in dict.fromkeys((*degradations, *turn.manifest.degradations)):
            self._telemetry.count(
                Metric.DEGRADATIONS,
                {"agent_memory.degradation": degradation.value, "agent_memory.operation": "turn"},
            )
        return turn

    def after_turn_settled(self, turn: TurnOutcome) -> bool:
        scheduled = super().after_turn_settled(turn)
        if scheduled:
            self._timer.admitted(self.agent_id, self.session_id)
        return scheduled


def _turn_attributes(turn: TurnContribution) -> dict[str, str | int | float]:
    manifest = turn.manifest
    attributes: dict[str, str | int | float] = {
        "agent_memory.turn.outcome": turn.outcome.value,
        "agent_memory.memories.selected": len(manifest.selected),
        "agent_memory.memories.dropped": len(manifest.dropped),
        "agent_memory.directives.selected": len(manifest.directives.selected),
        "agent_memory.tokens.estimated": manifest.estimated_tokens,
        "agent_memory.tokens.budget": manifest.token_budget,
    }
    if manifest.degradations:
        attributes["agent_memory.degradations"] = ",".join(d.value for d in manifest.degradations)
    if turn.retrieval is not None:
        attributes["agent_memory.fts.candidates"] = turn.retrieval.fts_candidates
        attributes["agent_memory.vector.candidates"] = turn.retrieval.vector_candidates
        attributes["agent_memory.revalidated"] = turn.retrieval.revalidated
    if manifest.timings is not None:
        for stage in (*STAGES, "total"):
            attributes[f"agent_memory.stage.{stage}_ms"] = round(
                getattr(manifest.timings, stage), 3
            )
    return attributes


class IngestionTimer:
    """Times each session's background passes from the reports they publish."""

    def __init__(self, telemetry: Telemetry, clock: InfraClock) -> None:
        self._telemetry = telemetry
        self._clock = clock
        self._running: dict[tuple[str, str], float] = {}  # since when the current pass runs
        self._queued: set[tuple[str, str]] = set()  # admitted while a pass was running

    def admitted(self, agent_id: str, session_id: str) -> None:
        key = (agent_id, session_id)
        if key in self._running:
            self._queued.add(key)
        else:
            self._running[key] = self._clock.monotonic()

    def reported(self, report: IngestionReport) -> None:
        key = (report.agent_id, report.session_id)
        now = self._clock.monotonic()
        if report.outcome in _REFUSALS:
            seconds = 0.0
        else:
            seconds = now - self._running.get(key, now)
            if key in self._queued or report.outcome in _CONTINUED:
                self._queued.discard(key)
                self._running[key] = now
            else:
                self._running.pop(key, None)
        attributes = {
            **memory_attributes("update_memory", report.agent_id),
            "gen_ai.conversation.id": report.session_id,
            "agent_memory.ingestion.outcome": report.outcome.value,
            "agent_memory.ingestion.chunks": len(report.chunks),
            "agent_memory.ingestion.stored": len(report.stored_ids),
            "agent_memory.ingestion.cursor_before": report.cursor_before,
            "agent_memory.ingestion.cursor_after": report.cursor_after,
        }
        if report.error is not None:
            attributes["error.type"] = report.error
        self._telemetry.completed(
            SpanName.INGESTION, duration_ms=1000.0 * seconds, attributes=attributes
        )
        self._telemetry.observe(
            Metric.INGESTION_DURATION,
            seconds,
            {"agent_memory.ingestion.outcome": report.outcome.value},
        )
