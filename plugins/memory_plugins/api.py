"""The host API: open the memory and drive it from async code or, through `SyncMemory`, sync code.

An async host (R-HOST-1)::

    memory = await open_memory_async("memory-data", tape=my_tape)
    runtime = memory.session("assistant", chat_id)
    turn = await runtime.prepare_turn(message_id, user_text)
    reply = await llm(place(turn, user_text))           # memory first, the user's words last
    runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
    ...
    await memory.aclose()

A sync host uses `SyncMemory`, which owns a private event loop thread. `open_memory` itself
is synchronous today (it only opens local files and builds objects); `open_memory_async`
runs it off the caller's event loop so a slow model load never stalls other tasks, and
keeps async hosts source-compatible if opening ever has to await.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import (
    Awaitable,
    Callable,
    Collection,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from datetime import datetime
from typing import Any, TypeVar

from memory_adapters.tapes import InMemoryTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Category, Claim, ClaimDraft, ClaimKind
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.domain.temporal import ATEMPORAL, TemporalMetadata
from memory_core.ports.claims import (
    AuditEvent,
    Conflict,
    InsertOutcome,
    PersonaVersion,
    PersonaView,
    RepairReport,
    Resolution,
)
from memory_core.ports.tape import EntryRole
from memory_core.services.maintenance import MaintenanceStatus, PassReport
from memory_core.services.memory import (
    ClaimHistory,
    ClaimPage,
    ClaimStatus,
    ClearListener,
    ClearResult,
    ForgetResult,
    HealthReport,
    MemoryService,
    Ranking,
    RankSource,
    ReindexReport,
    RememberResult,
)
from memory_core.services.memory.tools import REMEMBER_IMPORTANCE
from memory_core.services.read.retrieval.service import RetrievalPurpose, RetrievalResult
from memory_core.services.read.runtime import MemoryRuntime, TurnContribution, place
from memory_core.services.read.scoring import ScoringPolicy
from memory_core.services.write.ingestion.types import SessionKind, TurnOutcome, TurnStatus
from memory_plugins.bootstrap import Clock, PortOverrides, open_memory
from memory_plugins.config import MemoryConfig
from memory_plugins.registry import PluginRegistry
from memory_plugins.tools import handle_tool_call

# Everything a host needs comes from this one module (the README's host imports nothing
# else): the door, the turn's values, and the in-memory tape that stands in for a host's own
# message store until it writes a tape adapter.
__all__ = [
    "EntryRole",
    "InMemoryTape",
    "MemoryRuntime",
    "MemoryService",
    "SyncMemory",
    "TurnContribution",
    "TurnOutcome",
    "TurnStatus",
    "open_memory",
    "open_memory_async",
    "place",
]

T = TypeVar("T")

_CALL_TIMEOUT = object()  # `_call`'s default: the instance's `call_timeout`

PathLike = str | os.PathLike[str]


async def open_memory_async(
    data_dir: PathLike | None = None,
    *,
    config: MemoryConfig | PathLike | None = None,
    tape: object | None = None,
    clock: Clock | None = None,
    overrides: PortOverrides | Mapping[str, object] | None = None,
    plugins: Iterable[object] = (),
    registry: PluginRegistry | None = None,
    strict_plugins: bool = False,
) -> MemoryService:
    """`open_memory` for async hosts: same arguments, run in a worker thread so that plugin
    loading and a local model's start-up do not block the event loop. Then finishes any
    agent clear a crash interrupted, one agent at a time (R-FORGET-3): until it is done,
    that agent's claims are neither readable nor writable anyway."""
    memory = await asyncio.to_thread(
        open_memory,
        data_dir,
        config=config,
        tape=tape,
        clock=clock,
        overrides=overrides,
        plugins=plugins,
        registry=registry,
        strict_plugins=strict_plugins,
    )
    await memory.resume_clears()
    return memory


class SyncMemory:
    """A `MemoryService` for synchronous hosts: every call runs on a private event loop.

    Limits, by design:

    - Each call blocks the calling thread until it is done. Calls from several threads are
      served one loop step at a time on the one private loop — right for a chat app or a
      script, not for a server under load (use the async API there).
    - Background work (extraction after `after_turn_settled`, embedding) runs on the private
      loop between and during your calls; `close()` waits for it before closing the stores.
    - The tape you pass is read on the loop thread while you write to it from yours, so it
      must be thread-safe (the first-party tapes are).
    - Never call a `SyncMemory` from code that itself runs on its loop (a plugin, a tape
      method): that would wait for itself, so it raises RuntimeError instead.
    - Returned values are frozen attrs values, safe to keep anywhere. The underlying
      `service` belongs to the loop: reach it only through `run(...)`.
    - `call_timeout` (seconds, None = no limit) bounds each call; a call that overruns is
      cancelled and raises TimeoutError. Turns have their own soft deadline regardless.
    """

    def __init__(
        self,
        data_dir: PathLike | None = None,
        *,
        config: MemoryConfig | PathLike | None = None,
        tape: object | None = None,
        clock: Clock | None = None,
        overrides: PortOverrides | Mapping[str, object] | None = None,
        plugins: Iterable[object] = (),
        registry: PluginRegistry | None = None,
        strict_plugins: bool = False,
        call_timeout: float | None = None,
    ) -> None:
        self._timeout = call_timeout
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="agent-memory-loop", daemon=True
        )
        self._thread.start()

        async def build() -> MemoryService:
            # Built on the loop thread: the service spawns its background tasks there.
            memory = open_memory(
                data_dir,
                config=config,
                tape=tape,
                clock=clock,
                overrides=overrides,
                plugins=plugins,
                registry=registry,
                strict_plugins=strict_plugins,
            )
            try:
                # As `open_memory_async` does: an agent whose clear a crash interrupted
                # stays fenced (ClearInProgress) until the clear is finished (R-FORGET-3).
                await memory.resume_clears()
            except BaseException:
                await memory.aclose()
                raise
            return memory

        try:
            self._service = self._call(build(), timeout=None)
        except BaseException:
            self._stop_loop()
            raise

    # --- generic ------------------------------------------------------------------------
    def run(self, work: Callable[[MemoryService], Awaitable[T]]) -> T:
        """Run `await work(service)` on the memory's loop and return its result."""
        service = self._require_open()

        async def call() -> T:
            return await work(service)

        return self._call(call())

    def _run_sync(self, work: Callable[[MemoryService], T]) -> T:
        """Run a synchronous service method on the loop thread, like every other call:
        the service's state belongs to the loop."""

        async def call(memory: MemoryService) -> T:
            return work(memory)

        return self.run(call)

    # --- the model's tools -----------------------------------------------------------------
    def remember(
        self,
        agent_id: str,
        content: str,
        *,
        session_id: str | None = None,
        scope: Scope | None = None,
        user_add: bool = False,
        kind: ClaimKind = ClaimKind.SEMANTIC,
        category: Category | None = None,
        importance: float = REMEMBER_IMPORTANCE,
        temporal: TemporalMetadata = ATEMPORAL,
    ) -> RememberResult:
        return self.run(
            lambda m: m.remember(
                agent_id,
                content,
                session_id=session_id,
                scope=scope,
                user_add=user_add,
                kind=kind,
                category=category,
                importance=importance,
                temporal=temporal,
            )
        )

    def recall(
        self,
        agent_id: str,
        query: str,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        project_id: str | None = None,
        top_k: int | None = None,
        purpose: RetrievalPurpose = RetrievalPurpose.RECALL,
        deadline: Deadline | None = None,
        cancel: CancellationToken | None = None,
    ) -> RetrievalResult:
        return self.run(
            lambda m: m.recall(
                agent_id,
                query,
                session_id=session_id,
                user_id=user_id,
                project_id=project_id,
                top_k=top_k,
                purpose=purpose,
                deadline=deadline,
                cancel=cancel,
            )
        )

    def forget(self, agent_id: str, claim_id: str) -> ForgetResult:
        return self.run(lambda m: m.forget(agent_id, claim_id))

    def handle_tool_call(
        self,
        agent_id: str,
        session_id: str | None,
        name: str,
        arguments: str | Mapping[str, Any] | None,
        *,
        user_id: str | None = None,
        project_id: str | None = None,
        allow_user_tools: bool = False,
    ) -> dict[str, Any]:
        """`memory_plugins.tools.handle_tool_call` on this memory."""
        return self.run(
            lambda m: handle_tool_call(
                m,
                agent_id,
                session_id,
                name,
                arguments,
                user_id=user_id,
                project_id=project_id,
                allow_user_tools=allow_user_tools,
            )
        )

    # --- the user's view and controls ---------------------------------------------------
    def get(self, agent_id: str, claim_id: str) -> Claim:
        return self.run(lambda m: m.get(agent_id, claim_id))

    def list(
        self,
        agent_id: str,
        *,
        kinds: Collection[ClaimKind | str] | None = None,
        statuses: Collection[ClaimStatus | str] | None = None,
        scope: Scope | ScopeFilter | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> ClaimPage:
        return self.run(
            lambda m: m.list(
                agent_id, kinds=kinds, statuses=statuses, scope=scope, limit=limit, after=after
            )
        )

    def update(
        self,
        agent_id: str,
        claim_id: str,
        content: str,
        *,
        expected_revision: int | None = None,
    ) -> Claim:
        return self.run(
            lambda m: m.update(agent_id, claim_id, content, expected_revision=expected_revision)
        )

    def history(self, agent_id: str, claim_id: str) -> ClaimHistory:
        return self.run(lambda m: m.history(agent_id, claim_id))

    # --- maintenance, conflicts, persona, audit ------------------------------------------
    def start_maintenance(self) -> None:
        self._run_sync(lambda m: m.start_maintenance())

    def stop_maintenance(self) -> None:
        self._run_sync(lambda m: m.stop_maintenance())

    def drain_maintenance(self, timeout: float | None = None) -> None:
        self.run(lambda m: m.drain_maintenance(timeout))

    def maintenance_status(self) -> MaintenanceStatus:
        return self._run_sync(lambda m: m.maintenance_status())

    def run_maintenance(
        self,
        agent_id: str,
        *,
        heavy: bool | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> PassReport:
        return self.run(lambda m: m.run_maintenance(agent_id, heavy=heavy, progress=progress))

    def quiesce(self, timeout: float | None = None) -> None:
        self.run(lambda m: m.quiesce(timeout))

    def resume(self) -> None:
        self._run_sync(lambda m: m.resume())

    def dirty_seeds(self, agent_id: str) -> int:
        return self._run_sync(lambda m: m.dirty_seeds(agent_id))

    def list_conflicts(self, agent_id: str, *, limit: int = 50) -> Sequence[Conflict]:
        return self._run_sync(lambda m: m.list_conflicts(agent_id, limit=limit))

    def resolve_conflict(
        self, agent_id: str, challenger_id: str, resolution: Resolution | str
    ) -> Claim:
        return self.run(lambda m: m.resolve_conflict(agent_id, challenger_id, resolution))

    def persona(self, agent_id: str) -> PersonaView:
        return self._run_sync(lambda m: m.persona(agent_id))

    def approve_persona(self, agent_id: str, draft_id: str) -> PersonaVersion:
        return self.run(lambda m: m.approve_persona(agent_id, draft_id))

    def reject_persona(self, agent_id: str, draft_id: str) -> PersonaVersion:
        return self.run(lambda m: m.reject_persona(agent_id, draft_id))

    def rollback_persona(self, agent_id: str) -> PersonaVersion:
        return self.run(lambda m: m.rollback_persona(agent_id))

    def audit_events(self, agent_id: str, *, limit: int = 50) -> Sequence[AuditEvent]:
        return self._run_sync(lambda m: m.audit_events(agent_id, limit=limit))

    def get_claim(self, agent_id: str, claim_id: str) -> Claim:
        return self._run_sync(lambda m: m.get_claim(agent_id, claim_id))

    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        return self._run_sync(
            lambda m: m.list_claims(
                agent_id,
                scope_filter=scope_filter,
                include_inactive=include_inactive,
                limit=limit,
                after_id=after_id,
            )
        )

    def restore(self, agent_id: str, claim_id: str) -> Claim:
        return self.run(lambda m: m.restore(agent_id, claim_id))

    def delete(self, agent_id: str, claim_id: str) -> int:
        return self.run(lambda m: m.delete(agent_id, claim_id))

    def clear(self, agent_id: str, *, progress: ClearListener | None = None) -> ClearResult:
        """Agent clear; `progress` is called on the memory's loop thread."""
        return self.run(lambda m: m.clear(agent_id, progress=progress))

    def resume_clears(self, *, progress: ClearListener | None = None) -> Sequence[ClearResult]:
        return self.run(lambda m: m.resume_clears(progress=progress))

    def retire(self, agent_id: str) -> bool:
        return self.run(lambda m: m.retire(agent_id))

    # --- the directive plane ------------------------------------------------------------
    def create_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive:
        return self._run_sync(lambda m: m.create_directive(agent_id, kind, content, topic=topic))

    def suggest_directive(
        self, agent_id: str, kind: DirectiveKind, content: str, *, topic: str | None = None
    ) -> Directive | None:
        return self._run_sync(lambda m: m.suggest_directive(agent_id, kind, content, topic=topic))

    def approve_directive(self, agent_id: str, directive_id: str) -> Directive:
        return self._run_sync(lambda m: m.approve_directive(agent_id, directive_id))

    def reject_directive(self, agent_id: str, directive_id: str) -> Directive:
        return self._run_sync(lambda m: m.reject_directive(agent_id, directive_id))

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        return self._run_sync(lambda m: m.list_directives(agent_id, status=status))

    # --- upkeep, diagnostics, rankings --------------------------------------------------
    def now(self) -> datetime:
        return self._run_sync(lambda m: m.now())

    def warm(self, agent_id: str) -> bool:
        return self.run(lambda m: m.warm(agent_id))

    def embed_pending(self, agent_id: str) -> int:
        return self.run(lambda m: m.embed_pending(agent_id))

    def pending_embeddings(self, agent_id: str) -> int:
        return self._run_sync(lambda m: m.pending_embeddings(agent_id))

    def reindex(
        self, agent_id: str, *, progress: Callable[[int, int], None] | None = None
    ) -> ReindexReport:
        """Re-embed the agent; `progress` is called on the memory's loop thread."""
        return self.run(lambda m: m.reindex(agent_id, progress=progress))

    def import_claims(
        self, agent_id: str, drafts: Sequence[ClaimDraft], *, recorded_at: datetime
    ) -> Sequence[InsertOutcome]:
        return self.run(lambda m: m.import_claims(agent_id, drafts, recorded_at=recorded_at))

    def repair(self) -> RepairReport:
        return self._run_sync(lambda m: m.repair())

    def known_agents(self) -> list[str]:
        return self._run_sync(lambda m: m.known_agents())

    def diagnose(self, agent_ids: Sequence[str] = ()) -> HealthReport:
        return self.run(lambda m: m.diagnose(agent_ids))

    def rank(
        self,
        agent_id: str,
        query: str,
        *,
        source: RankSource,
        depth: int,
        scoring: ScoringPolicy | None = None,
    ) -> Ranking:
        return self.run(
            lambda m: m.rank(agent_id, query, source=source, depth=depth, scoring=scoring)
        )

    # --- the turn -------------------------------------------------------------------------
    def prepare_turn(
        self,
        agent_id: str,
        session_id: str,
        message_id: str,
        user_text: str,
        *,
        budget_tokens: int | None = None,
        kind: SessionKind | str = SessionKind.MAIN,
        user_id: str | None = None,
        project_id: str | None = None,
    ) -> TurnContribution:
        """The session's contribution for this user message (see `MemoryRuntime`); the
        session recalls the claims of `user_id` and `project_id` too (R-SCOPE-1)."""

        async def work(memory: MemoryService) -> TurnContribution:
            runtime = memory.session(
                agent_id, session_id, kind=kind, user_id=user_id, project_id=project_id
            )
            return await runtime.prepare_turn(message_id, user_text, budget_tokens=budget_tokens)

        return self.run(work)

    def after_turn_settled(
        self,
        agent_id: str,
        session_id: str,
        outcome: TurnOutcome,
        *,
        kind: SessionKind | str = SessionKind.MAIN,
        user_id: str | None = None,
        project_id: str | None = None,
    ) -> bool:
        """Report a settled turn; extraction (if admitted) continues in the background."""

        async def work(memory: MemoryService) -> bool:
            # On the loop: the runtime spawns the extraction task on the running loop.
            runtime = memory.session(
                agent_id, session_id, kind=kind, user_id=user_id, project_id=project_id
            )
            return runtime.after_turn_settled(outcome)

        return self.run(work)

    def drain(self, agent_id: str, session_id: str) -> None:
        """Wait until the session's background extraction has settled."""

        async def work(memory: MemoryService) -> None:
            await memory.session(agent_id, session_id).drain()

        self.run(work)

    # --- lifecycle ------------------------------------------------------------------------
    def close(self) -> None:
        """Wait for background work, close providers and stores, stop the loop. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._service.aclose(), timeout=None)
        finally:
            self._stop_loop()

    def __enter__(self) -> SyncMemory:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- internals ------------------------------------------------------------------------
    def _require_open(self) -> MemoryService:
        if self._closed:
            raise RuntimeError("SyncMemory is closed")
        return self._service

    def _call(
        self, coroutine: Coroutine[Any, Any, T], *, timeout: float | object | None = _CALL_TIMEOUT
    ) -> T:
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("SyncMemory called from its own event loop: use the async API")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        limit = self._timeout if timeout is _CALL_TIMEOUT else timeout
        try:
            return future.result(limit)  # type: ignore[arg-type]
        except TimeoutError:
            future.cancel()
            raise

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
