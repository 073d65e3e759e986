"""MemoryService: the facade a host holds — one per process and configuration (R-HOST-1).

It owns nothing concrete: the composition root hands it ports and services. Hosts get a
per-session `MemoryRuntime` from `session(...)`, and call the tool and management operations
here: remember / recall / forget (the model's tools), delete, restore, clear, retire and the
directive plane (the user's controls). Every operation names its agent (R-STORE-3).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from enum import StrEnum

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import (
    Category,
    Claim,
    ClaimDraft,
    ClaimKind,
    ClaimSource,
    WriteOrigin,
)
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.scope import Scope, ScopeContext, validate_agent_id
from memory_core.ports.claims import (
    ClaimStore,
    ClearPhase,
    ClearProgress,
    InsertStatus,
    RepairReport,
)
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.ports.tape import TapeAnchorWriter
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.read.retrieval.service import (
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalResult,
    RetrievalService,
)
from memory_core.services.read.runtime import MemoryRuntime
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.fences import WriteCoordinator
from memory_core.services.write.ingestion.service import IngestionRuntime, IngestionServices
from memory_core.services.write.ingestion.types import SessionKind
from memory_core.settings import MemorySettings

__all__ = ["ForgetResult", "MemoryService", "RememberResult", "RememberStatus"]

log = logging.getLogger(__name__)


class RememberStatus(StrEnum):
    STORED = "stored"
    ALREADY_KNOWN = "already_known"
    # The user forgot this exact text; only the user can bring it back (R-WRITE-5).
    REQUIRES_USER_REAUTHORIZATION = "requires_user_reauthorization"


@attrs.frozen(kw_only=True)
class RememberResult:
    status: RememberStatus
    claim_id: str | None
    reauthorized: bool = False  # a user add released the tombstones of this text


@attrs.frozen(kw_only=True)
class ForgetResult:
    """`memory_forget` archives: the row stays on this machine, out of recall (R-FORGET-2)."""

    claim_id: str
    archived: bool
    note: str = (
        "Archived: the memory is kept locally and can be restored, but it no longer takes part "
        "in recall. Deleting it permanently is a separate user action."
    )


class MemoryService:
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
        self._ingestion = ingestion
        self._sessions: dict[tuple[str, str], MemoryRuntime] = {}
        self._background: list[TaskHandle] = []

    # --- sessions -------------------------------------------------------------------------
    def session(
        self, agent_id: str, session_id: str, *, kind: SessionKind | str = SessionKind.MAIN
    ) -> MemoryRuntime:
        """The runtime of one session; the same object for the same (agent, session)."""
        validate_agent_id(agent_id)
        key = (agent_id, session_id)
        runtime = self._sessions.get(key)
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
            runtime = MemoryRuntime(
                agent_id=agent_id,
                session_id=session_id,
                kind=SessionKind(kind),
                store=self.store,
                retrieval=self.retrieval,
                anchors=self._anchors,
                domain_clock=self._clock,
                infra_clock=self._infra,
                calls=self.retrieval.calls,
                settings=self.settings,
                ingestion=ingestion,
            )
            self._sessions[key] = runtime
        return runtime

    # --- the model's tools ----------------------------------------------------------------
    async def remember(
        self,
        agent_id: str,
        content: str,
        *,
        session_id: str | None = None,
        scope: Scope | None = None,
        user_add: bool = False,
        kind: ClaimKind = ClaimKind.SEMANTIC,
        category: Category | None = None,
        importance: float = 0.7,
    ) -> RememberResult:
        """Store one fact. The model's `memory_remember` never releases a tombstone; only an
        explicit user add (`user_add=True`) brings back forgotten text (R-WRITE-5)."""
        draft = ClaimDraft(
            agent_id=agent_id,
            kind=kind,
            content=content,
            category=category,
            importance=importance,
            scope=scope or Scope.agent(),
            source=ClaimSource(session_id=session_id, extractor="user" if user_add else "tool"),
        )
        origin = WriteOrigin.USER_ADD if user_add else WriteOrigin.MODEL_TOOL
        async with self._coordinator.exclusive(agent_id):
            outcome = self.store.insert(draft, origin=origin, now=self._clock.now())
        if outcome.status is InsertStatus.SUPPRESSED:
            return RememberResult(
                status=RememberStatus.REQUIRES_USER_REAUTHORIZATION, claim_id=None
            )
        assert outcome.claim is not None
        if outcome.status is InsertStatus.DUPLICATE:
            return RememberResult(status=RememberStatus.ALREADY_KNOWN, claim_id=outcome.claim.id)
        self._schedule_embedding(agent_id)
        return RememberResult(
            status=RememberStatus.STORED,
            claim_id=outcome.claim.id,
            reauthorized=outcome.released_tombstones > 0,
        )

    async def recall(
        self,
        agent_id: str,
        query: str,
        *,
        session_id: str | None = None,
        top_k: int | None = None,
        purpose: RetrievalPurpose = RetrievalPurpose.RECALL,
        deadline: Deadline | None = None,
        cancel: CancellationToken | None = None,
    ) -> RetrievalResult:
        return await self.retrieval.retrieve(
            RetrievalRequest(
                agent_id=agent_id,
                query=query,
                purpose=purpose,
                top_k=top_k,
                context=ScopeContext(session_id=session_id),
            ),
            deadline=deadline or self._deadline(self.settings.prepare_turn_deadline_ms / 1000),
            cancel=cancel or CancellationToken(),
        )

    async def forget(self, agent_id: str, claim_id: str) -> ForgetResult:
        """`memory_forget`: recoverable archive (R-FORGET-2)."""
        async with self._coordinator.exclusive(agent_id):
            claim = self.store.archive(agent_id, claim_id, now=self._clock.now())
        await self.index.forget(
            agent_id, [claim.id], deadline=self._deadline(10), cancel=CancellationToken()
        )
        return ForgetResult(claim_id=claim.id, archived=True)

    # --- the user's controls --------------------------------------------------------------
    async def restore(self, agent_id: str, claim_id: str) -> Claim:
        async with self._coordinator.exclusive(agent_id):
            claim = self.store.restore(agent_id, claim_id, now=self._clock.now())
        self._schedule_embedding(agent_id)
        return claim

    async def delete(self, agent_id: str, claim_id: str) -> int:
        """Exact forgetting (R-FORGET-1): tombstones and the delete commit together, work in
        flight for the agent is fenced, then the vector goes. Returns tombstones written."""
        self._coordinator.invalidate(agent_id)
        async with self._coordinator.exclusive(agent_id):
            outcome = self.store.delete(agent_id, claim_id, now=self._clock.now())
        self.store.checkpoint()  # forensic: no file keeps what was deleted (R-PRIV-3)
        await self.index.forget(
            agent_id, [claim_id], deadline=self._deadline(10), cancel=CancellationToken()
        )
        return outcome.tombstones_written

    async def clear(
        self, agent_id: str, *, progress: Callable[[ClearProgress], None] | None = None
    ) -> ClearProgress:
        """Agent clear (R-FORGET-3): a persisted, resumable job. Claims go in batches of at
        most `clear_batch_size` rows, yielding between batches; tombstones and directives
        stay; the vector namespace is dropped last."""
        validate_agent_id(agent_id)
        self._coordinator.invalidate(agent_id)
        self.gateway.abort_agent(agent_id)
        async with self._coordinator.exclusive(agent_id):
            job = self.store.begin_clear(agent_id, now=self._clock.now())
        return await self._finish_clear(job, progress)

    async def resume_clears(
        self, *, progress: Callable[[ClearProgress], None] | None = None
    ) -> Sequence[ClearProgress]:
        """Finish clears a crash interrupted, one agent at a time (R-FORGET-3)."""
        return [await self._finish_clear(job, progress) for job in self.store.pending_clears()]

    async def _finish_clear(
        self, job: ClearProgress, progress: Callable[[ClearProgress], None] | None
    ) -> ClearProgress:
        agent_id = job.agent_id
        while job.phase is ClearPhase.CLAIMS:
            async with self._coordinator.exclusive(agent_id):
                job = self.store.run_clear_batch(
                    agent_id, batch_size=self.settings.clear_batch_size
                )
            if progress is not None:
                progress(job)
            await self._scheduler.yield_now()
        # A vector reset that fails is deferred: leftovers carry no certificate and are
        # deleted as orphans at the next warm-up (R-VEC-4).
        await self.index.drop_agent(
            agent_id,
            deadline=self._deadline(self.settings.vector_clear_seconds),
            cancel=CancellationToken(),
        )
        self.store.finish_clear(agent_id)
        self.store.checkpoint()  # forensic: no file keeps what was cleared (R-PRIV-3)
        self.gateway.reset_agent(agent_id)
        done = attrs.evolve(job, phase=ClearPhase.DONE)
        if progress is not None:
            progress(done)
        return done

    async def retire(self, agent_id: str) -> None:
        """Delete the agent's whole namespace, directives and tombstones included (R-FORGET-4)."""
        validate_agent_id(agent_id)
        self._coordinator.invalidate(agent_id)
        self.gateway.abort_agent(agent_id)
        for key in [key for key in self._sessions if key[0] == agent_id]:
            self._sessions.pop(key).close()
        async with self._coordinator.exclusive(agent_id):
            self.store.retire_agent(agent_id)
        await self.index.drop_agent(
            agent_id,
            deadline=self._deadline(self.settings.vector_clear_seconds),
            cancel=CancellationToken(),
        )
        self.gateway.reset_agent(agent_id)
        self._coordinator.forget_agent(agent_id)

    # --- directives (R-DIR-1..3) ------------------------------------------------------------
    def create_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive:
        """An explicit user create: active at once."""
        return self.store.create_directive(
            agent_id, kind, content, topic=topic, now=self._clock.now()
        )

    def suggest_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive | None:
        """A model or extraction suggestion: a draft, never active (R-DIR-1)."""
        return self.store.suggest_directive(
            agent_id, kind, content, topic=topic, now=self._clock.now()
        )

    def approve_directive(self, agent_id: str, directive_id: str) -> Directive:
        return self.store.set_directive_status(
            agent_id, directive_id, DirectiveStatus.ACTIVE, now=self._clock.now()
        )

    def reject_directive(self, agent_id: str, directive_id: str) -> Directive:
        return self.store.set_directive_status(
            agent_id, directive_id, DirectiveStatus.REJECTED, now=self._clock.now()
        )

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        return self.store.list_directives(agent_id, status=status)

    # --- embeddings and upkeep ------------------------------------------------------------
    async def warm(self, agent_id: str) -> bool:
        """Embed what is pending and earn the agent's ready certificate; False when vectors
        are off or unavailable (recall then runs on FTS alone)."""
        await self.embed_pending(agent_id)
        certificate = await self.index.warm(
            agent_id,
            deadline=self._deadline(self.settings.embedding_pass_seconds),
            cancel=CancellationToken(),
        )
        return certificate is not None

    async def embed_pending(self, agent_id: str) -> int:
        report = await self.index.drain(
            agent_id,
            deadline=self._deadline(self.settings.embedding_pass_seconds),
            cancel=CancellationToken(),
        )
        return report.embedded

    async def on_committed(self, agent_id: str, claim_ids: Sequence[str]) -> None:
        """Ingestion's commit hook: embed the new claims."""
        if claim_ids:
            await self.embed_pending(agent_id)

    def repair(self) -> RepairReport:
        """Startup repair of stored temporal and scope metadata (R-TIME-4, R-SCOPE-4)."""
        return self.store.repair(now=self._clock.now())

    async def aclose(self) -> None:
        """Stop sessions, wait for their work, then close providers and stores (R-HOST-1)."""
        for runtime in self._sessions.values():
            runtime.close()
        for runtime in self._sessions.values():
            await runtime.drain()
        self._sessions.clear()
        # Embedding passes still running would write into stores about to close: wait for
        # them (each is bounded by its own deadline).
        for handle in self._background:
            await handle.wait()
        self._background.clear()
        await self.index.settle()
        await self.gateway.aclose()
        if self.index.vectors is not None:
            await self.index.vectors.aclose()
        self.store.close()

    # --- internals ------------------------------------------------------------------------
    def _schedule_embedding(self, agent_id: str) -> None:
        if self.index.enabled:
            self._background = [handle for handle in self._background if not handle.done]
            self._background.append(
                self._scheduler.spawn(
                    lambda: self._embed_quietly(agent_id), name=f"memory-embed:{agent_id}"
                )
            )

    async def _embed_quietly(self, agent_id: str) -> None:
        await self.embed_pending(agent_id)

    def _deadline(self, seconds: float) -> Deadline:
        return Deadline.after(self._infra, seconds)
