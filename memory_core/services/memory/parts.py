"""What every use-case group of `MemoryService` shares: its ports and services, the
per-session runtimes, background embedding, deadlines, and the orderly close (R-HOST-1).

The groups (tools, controls, directives, upkeep, diagnostics, rankings) are mixins over this
class, so a host still holds one flat facade while each group stays one small module.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import ScopeContext, validate_agent_id
from memory_core.domain.validation import check_session_id
from memory_core.ports.claims import ClaimStore
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.ports.tape import TapeAnchorWriter
from memory_core.ports.telemetry import Attributes, SpanName, Telemetry, TelemetrySpan
from memory_core.services.memory.observability import (
    IngestionTimer,
    ObservedRuntime,
    memory_attributes,
    timed_operation,
)
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.read.retrieval.service import RetrievalService
from memory_core.services.read.runtime import MemoryRuntime
from memory_core.services.read.working import WorkingMemory
from memory_core.services.vectors.drain_loop import DrainLoop, DrainTunables
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.fences import WriteCoordinator
from memory_core.services.write.ingestion.service import IngestionRuntime, IngestionServices
from memory_core.services.write.ingestion.types import IngestionReport, SessionKind
from memory_core.settings import MemorySettings

__all__ = ["MemoryParts", "scope_context"]


def scope_context(
    session_id: object = None, user_id: object = None, project_id: object = None
) -> ScopeContext:
    """The caller's scope ids, checked at the boundary (R-DOM-4, R-SCOPE-1): each None or an
    id naming exactly one scope — an id with surrounding whitespace would be another user's."""
    return ScopeContext(
        session_id=check_session_id(session_id, "session_id"),
        user_id=check_session_id(user_id, "user_id"),
        project_id=check_session_id(project_id, "project_id"),
    )


def _both(
    first: Callable[[IngestionReport], None] | None, second: Callable[[IngestionReport], None]
) -> Callable[[IngestionReport], None]:
    if first is None:
        return second

    def both(report: IngestionReport) -> None:
        first(report)
        second(report)

    return both


class MemoryParts:
    def __init__(
        self,
        *,
        store: ClaimStore,
        retrieval: RetrievalService,
        index: VectorIndex,
        gateway: ProviderGateway,
        coordinator: WriteCoordinator,
        scheduler: TaskScheduler,
        domain_clock: DomainClock,
        infra_clock: InfraClock,
        settings: MemorySettings,
        telemetry: Telemetry,
        anchors: TapeAnchorWriter | None = None,
        ingestion: IngestionServices | None = None,
    ) -> None:
        self.store = store
        self.retrieval = retrieval
        self.index = index
        self.gateway = gateway
        self.settings = settings
        self._coordinator = coordinator
        self._scheduler = scheduler
        self._clock = domain_clock
        self._infra = infra_clock
        self._anchors = anchors
        self._telemetry = telemetry
        self._ingestion_timer = IngestionTimer(telemetry, infra_clock)
        if ingestion is not None:
            # Every pass's report also ends its span (the host's own hook still hears it).
            ingestion = attrs.evolve(
                ingestion, on_report=_both(ingestion.on_report, self._ingestion_timer.reported)
            )
        self._ingestion = ingestion
        self._sessions: dict[tuple[str, str], MemoryRuntime] = {}
        self._background: list[TaskHandle] = []
        # Ingestion's commits mark their claims here; one loop embeds them in batches.
        self.embedding_drain = DrainLoop(
            index=index,
            scheduler=scheduler,
            infra_clock=infra_clock,
            tunables=DrainTunables.from_settings(settings),
        )
        # The stored working projection every session of an agent reads (R-READ-9).
        self.working = WorkingMemory(
            store=store,
            calls=retrieval.calls,
            domain_clock=domain_clock,
            infra_clock=infra_clock,
            settings=settings,
            scheduler=scheduler,
        )
        # Every serialised write of an agent (ingestion, the user's controls, merges) ends
        # by releasing its lock: its projection is rebuilt once the writes pause.
        coordinator.on_released(self.working.schedule)

    # --- sessions -------------------------------------------------------------------------
    def session(
        self,
        agent_id: str,
        session_id: str,
        *,
        kind: SessionKind | str = SessionKind.MAIN,
        user_id: str | None = None,
        project_id: str | None = None,
    ) -> MemoryRuntime:
        """The runtime of one session; the same object for the same (agent, session). Its
        turns recall the agent's claims plus those of this session, user and project."""
        validate_agent_id(agent_id)
        context = scope_context(session_id, user_id, project_id)
        key = (agent_id, session_id)
        runtime = self._sessions.get(key)
        if runtime is not None:
            # One conversation serves one user and project. Asking again without them finds
            # the session as it was opened; naming others would read the first one's scope
            # through the cached runtime.
            for field, asked, bound in (
                ("user_id", context.user_id, runtime.scope.user_id),
                ("project_id", context.project_id, runtime.scope.project_id),
            ):
                if asked is not None and asked != bound:
                    raise ValidationError(field, "this session is open for another one")
        if runtime is None:
            ingestion = (
                IngestionRuntime(
                    self._ingestion,
                    agent_id=agent_id,
                    session_id=session_id,
                    session_kind=SessionKind(kind),
                )
                if self._ingestion is not None
                else None
            )
            runtime = ObservedRuntime(
                telemetry=self._telemetry,
                timer=self._ingestion_timer,
                agent_id=agent_id,
                session_id=session_id,
                kind=SessionKind(kind),
                scope=context,
                store=self.store,
                retrieval=self.retrieval,
                anchors=self._anchors,
                domain_clock=self._clock,
                infra_clock=self._infra,
                calls=self.retrieval.calls,
                settings=self.settings,
                scheduler=self._scheduler,  # the turn's hard timer (R-READ-1)
                ingestion=ingestion,
                working=self.working,
            )
            self._sessions[key] = runtime
        return runtime

    async def aclose(self) -> None:
        """Stop sessions, wait for their work, then close providers and stores (R-HOST-1)."""
        for runtime in self._sessions.values():
            runtime.close()
        for runtime in self._sessions.values():
            await runtime.drain()
        self._sessions.clear()
        self.working.close()
        await self.working.drain()
        # Embedding passes still running would write into stores about to close: wait for
        # them (each batch is bounded by its own deadline), then take no more marks.
        await self.embedding_drain.settle()
        self.embedding_drain.close()
        if self._ingestion is not None and self._ingestion.offload is not None:
            self._ingestion.offload.close()  # the extraction worker: its sessions have drained
        for handle in self._background:
            await handle.wait()
        self._background.clear()
        await self.index.settle()
        await self.gateway.aclose()
        if self.index.vectors is not None:
            await self.index.vectors.aclose()
        self.retrieval.calls.close()  # no store call may start on a closing store
        self.store.close()

    # --- embeddings -------------------------------------------------------------------------
    async def embed_pending(self, agent_id: str) -> int:
        """Embed the agent's pending claims now; how many were embedded."""
        validate_agent_id(agent_id)
        report = await self.index.drain(
            agent_id,
            deadline=self._deadline(self.settings.embedding_pass_seconds),
            cancel=CancellationToken(),
        )
        return report.embedded

    def _schedule_embedding(self, agent_id: str) -> None:
        if self.index.enabled:
            self._background = [handle for handle in self._background if not handle.done]
            self._background.append(
                self._scheduler.spawn(
                    lambda: self._embed_quietly(agent_id), name=f"memory-embed:{agent_id}"
                )
            )

    async def _embed_quietly(self, agent_id: str) -> None:
        await self._embed_and_certify(agent_id)

    async def _embed_and_certify(self, agent_id: str) -> None:
        """Embed what is pending, then earn the ready certificate if the agent has none.

        An agent's first turn finds it cold and starts a warm-up in the background (the read
        path does, R-VEC-4). A new agent's warm-up finds no namespace — nothing is embedded
        yet — and stays cold; its first claims would then wait for the next cold turn to
        request another warm-up, and the turn after that to be hybrid. Certifying right
        after the first embedding makes the next turn hybrid."""
        embedded = await self.embed_pending(agent_id)
        if embedded and self.index.enabled and self.index.certificate(agent_id) is None:
            await self.index.warm(
                agent_id,
                deadline=self._deadline(self.settings.embedding_pass_seconds),
                cancel=CancellationToken(),
                if_cold=True,
            )

    def _operation(
        self, name: SpanName, operation: str, agent_id: str, extra: Attributes | None = None
    ) -> AbstractContextManager[TelemetrySpan]:
        """A span and a duration for one user-facing operation (GenAI memory names)."""
        attributes = {**memory_attributes(operation, agent_id), **(extra or {})}
        return timed_operation(self._telemetry, self._infra, name, attributes)

    def _deadline(self, seconds: float) -> Deadline:
        return Deadline.after(self._infra, seconds)
