"""The user's controls over stored claims: list, get, restore, delete, clear, retire.

Deleting is exact forgetting (R-FORGET-1), clearing a resumable job (R-FORGET-3), retiring
the end of an agent's namespace (R-FORGET-4). Each fences the agent's work in flight before
it writes and removes the vectors after: a vector never outlives its claim's text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.claims import Claim
from memory_core.domain.errors import AgentMemoryError
from memory_core.domain.scope import ScopeFilter, validate_agent_id
from memory_core.domain.validation import check_bool, check_id, check_instance, check_int
from memory_core.ports.claims import CleanupSource, ClearPhase, ClearProgress
from memory_core.ports.telemetry import SpanName
from memory_core.services.memory.parts import MemoryParts

__all__ = ["ClearListener", "ClearResult", "MemoryControls"]

ClearListener = Callable[[ClearProgress], None]


@attrs.frozen(kw_only=True)
class ClearResult(ClearProgress):
    """A finished clear. `vectors_dropped` is False when the vector store could not drop
    the namespace now: its leftovers carry no certificate and go at the next warm-up
    (R-VEC-4)."""

    vectors_dropped: bool = True


class MemoryControls(MemoryParts):
    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        """The agent's claims, newest first; every scope unless `scope_filter` narrows it
        (a management view, not recall: nothing is re-ranked or counted as access).
        `after_id` continues a page after that claim (keyset paging)."""
        validate_agent_id(agent_id)
        if scope_filter is not None:
            check_instance(scope_filter, ScopeFilter, "scope_filter")
        return self.store.list_claims(
            agent_id,
            scope_filter=scope_filter,
            include_inactive=check_bool(include_inactive, "include_inactive"),
            limit=check_int(limit, "limit", minimum=1),
            after_id=None if after_id is None else check_id(after_id, "after_id"),
        )

    def get_claim(self, agent_id: str, claim_id: str) -> Claim:
        """One claim in any lifecycle; NotFound for an unknown or foreign id."""
        _check_claim_ref(agent_id, claim_id)
        return self.store.get(agent_id, claim_id)

    async def restore(self, agent_id: str, claim_id: str) -> Claim:
        _check_claim_ref(agent_id, claim_id)
        async with self._coordinator.exclusive(agent_id):
            claim = self.store.restore(agent_id, claim_id, now=self._clock.now())
        self._schedule_embedding(agent_id)
        return claim

    async def delete(self, agent_id: str, claim_id: str) -> int:
        """Exact forgetting (R-FORGET-1): tombstones and the delete commit together, work in
        flight for the agent is fenced, then the vector goes. Returns tombstones written."""
        _check_claim_ref(agent_id, claim_id)
        record = {"gen_ai.memory.record.id": claim_id}
        with self._operation(SpanName.DELETE, "delete_memory", agent_id, record) as span:
            self._coordinator.invalidate(agent_id)
            async with self._coordinator.exclusive(agent_id):
                # Queued before the commit, with no await between: a kill after the commit
                # still leaves the vector's cleanup to the next start (R-FORGET-1).
                self.index.note_forgetting(agent_id, [claim_id])
                try:
                    outcome = self.store.delete(agent_id, claim_id, now=self._clock.now())
                except AgentMemoryError:
                    self.index.cleanup.finish(agent_id, [claim_id], CleanupSource.FORGET)
                    raise
            self.store.checkpoint()  # forensic: no file keeps what was deleted (R-PRIV-3)
            await self.index.forget(
                agent_id,
                [claim_id],
                deadline=self._deadline(self.settings.vector_clear_seconds),
                cancel=CancellationToken(),
            )
            span.set({"agent_memory.tombstones": outcome.tombstones_written})
            return outcome.tombstones_written

    async def clear(self, agent_id: str, *, progress: ClearListener | None = None) -> ClearResult:
        """Agent clear (R-FORGET-3): a persisted, resumable job. Claims go in batches of at
        most `clear_batch_size` rows, yielding between batches; tombstones and directives
        stay; the vector namespace is dropped last."""
        validate_agent_id(agent_id)
        with self._operation(SpanName.CLEAR, "delete_memory", agent_id) as span:
            self._coordinator.invalidate(agent_id)
            self.gateway.abort_agent(agent_id)
            async with self._coordinator.exclusive(agent_id):
                job = self.store.begin_clear(agent_id, now=self._clock.now())
            done = await self._finish_clear(job, progress)
            span.set({"agent_memory.clear.removed": done.removed_count})
            return done

    async def resume_clears(
        self, *, progress: ClearListener | None = None
    ) -> Sequence[ClearResult]:
        """Finish clears a crash interrupted, one agent at a time (R-FORGET-3), then the
        vector cleanups a failure or a kill left (R-FORGET-1)."""
        results = []
        for job in self.store.pending_clears():
            resumed = {"agent_memory.clear.resumed": True}
            with self._operation(SpanName.CLEAR, "delete_memory", job.agent_id, resumed) as span:
                results.append(await self._finish_clear(job, progress))
                span.set({"agent_memory.clear.removed": results[-1].removed_count})
        await self.index.finish_cleanups(
            deadline=self._deadline(self.settings.vector_clear_seconds),
            cancel=CancellationToken(),
        )
        return results

    async def _finish_clear(
        self, job: ClearProgress, progress: ClearListener | None
    ) -> ClearResult:
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
        dropped = await self.index.drop_agent(
            agent_id,
            deadline=self._deadline(self.settings.vector_clear_seconds),
            cancel=CancellationToken(),
        )
        self.store.finish_clear(agent_id)
        self.store.checkpoint()  # forensic: no file keeps what was cleared (R-PRIV-3)
        self.gateway.reset_agent(agent_id)
        fields = {**attrs.asdict(job, recurse=False), "phase": ClearPhase.DONE}
        done = ClearResult(**fields, vectors_dropped=dropped)
        if progress is not None:
            progress(done)
        return done

    async def retire(self, agent_id: str) -> bool:
        """Delete the agent's whole namespace, directives and tombstones included
        (R-FORGET-4). False when the vector namespace's drop was deferred (R-VEC-4)."""
        validate_agent_id(agent_id)
        with self._operation(SpanName.RETIRE, "delete_memory_store", agent_id):
            self._coordinator.invalidate(agent_id)
            self.gateway.abort_agent(agent_id)
            for key in [key for key in self._sessions if key[0] == agent_id]:
                self._sessions.pop(key).close()
            async with self._coordinator.exclusive(agent_id):
                self.store.retire_agent(agent_id)
            dropped = await self.index.drop_agent(
                agent_id,
                deadline=self._deadline(self.settings.vector_clear_seconds),
                cancel=CancellationToken(),
            )
            self.gateway.reset_agent(agent_id)
            self._coordinator.forget_agent(agent_id)
            return dropped


def _check_claim_ref(agent_id: object, claim_id: object) -> None:
    validate_agent_id(agent_id)
    check_id(claim_id, "claim_id")
