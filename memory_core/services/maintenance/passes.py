"""One maintenance pass of one agent (reference §8.3): the cheap pass — embed what is
pending, consolidate the dirty queue with the deterministic merge rule, archive stale
claims, trim the audit trail — and, when a text provider exists and no cooldown holds, the
heavy pass, whose merge step may ask the model about near-duplicates the rule cannot judge.

Every step begins at a checkpoint (`PassFence.check`): once the service stops, the pass
ends there, and the transaction it was about to run never starts (R-MAINT-2).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from enum import StrEnum

import attrs

from memory_core.domain.cancellation import Deadline
from memory_core.domain.errors import OperationCancelled
from memory_core.services.maintenance.challenges import ChallengeStep
from memory_core.services.maintenance.fence import MaintenanceStore, PassFence, PassTally
from memory_core.services.maintenance.merge import MergeStep
from memory_core.services.maintenance.persona import PersonaStep
from memory_core.services.maintenance.reflection import ReflectionStep
from memory_core.services.vectors.index import VectorIndex
from memory_core.settings import MemorySettings

__all__ = [
    "HEAVY_EVENT",
    "PASS_EVENT",
    "PassMode",
    "PassReport",
    "PassRunner",
]

PASS_EVENT = "memory/maintenance"
HEAVY_EVENT = "memory/maintenance_llm"


class PassMode(StrEnum):
    CHEAP = "cheap"
    HEAVY = "heavy"


@attrs.frozen(kw_only=True)
class PassReport:
    """What one pass did: counts and enums only (it becomes an audit event)."""

    agent_id: str
    mode: PassMode
    seeds: int = 0
    settled: int = 0
    deferred: int = 0
    merged: int = 0
    resolved: int = 0  # conflicts the model resolved
    reflected: int = 0  # reflection insights written
    persona_drafts: int = 0  # self-model drafts written (waiting for the user)
    archived: int = 0
    audit_pruned: int = 0
    llm_calls: int = 0
    llm_failures: int = 0
    input_tokens: int = 0
    skipped: str | None = None  # why the heavy pass did not run: "missing-model", "cooldown"
    stopped: bool = False  # the service stopped it at a checkpoint


@attrs.frozen(kw_only=True)
class PassRunner:
    store: MaintenanceStore
    index: VectorIndex
    merge: MergeStep
    challenges: ChallengeStep
    reflection: ReflectionStep
    persona: PersonaStep
    settings: MemorySettings
    now: Callable[[], datetime]

    async def run(
        self,
        agent_id: str,
        *,
        mode: PassMode,
        skipped: str | None,
        fence: PassFence,
        deadline: Deadline,
        progress: Callable[[str], None] | None = None,
    ) -> PassReport:
        def step(name: str) -> None:
            fence.check()
            deadline.raise_if_expired(f"maintenance {name}")
            if progress is not None:
                progress(name)

        tally = PassTally()
        report = PassReport(agent_id=agent_id, mode=mode, skipped=skipped)
        try:
            step("embed")
            # Seeds are judged by their vectors: embed what waits first (a failure leaves
            # them pending, and the merge step defers them).
            await self.index.drain(agent_id, deadline=deadline, cancel=fence.token)
            # Only a cold agent is warmed: a warm-up re-reads the whole namespace and checks
            # its coverage in native calls a stop cannot cut short, and the drains keep a
            # warm agent's vectors current anyway. Warming on every pass made it the step a
            # stop most often landed in, and what a drain waited for (R-MAINT-2).
            await self.index.warm(agent_id, deadline=deadline, cancel=fence.token, if_cold=True)
            if mode is PassMode.HEAVY:  # §8.3: challenge resolution comes first
                step("challenges")
                await self.challenges.run(agent_id, fence=fence, deadline=deadline, tally=tally)
            step("consolidate")
            await self.merge.run(
                agent_id, heavy=mode is PassMode.HEAVY, fence=fence, deadline=deadline, tally=tally
            )
            if mode is PassMode.HEAVY:
                step("reflection")
                await self.reflection.run(agent_id, fence=fence, deadline=deadline, tally=tally)
                step("persona")
                await self.persona.run(agent_id, fence=fence, deadline=deadline, tally=tally)
            archived = 0
            all_failed = tally.llm_calls > 0 and tally.llm_failures == tally.llm_calls
            if not all_failed:  # §8.3: a heavy pass whose model calls all failed archives nothing
                step("archive")
                archived_ids = self.store.archive_stale(
                    agent_id, now=self.now(), limit=self.settings.maintenance_archive_batch
                )
                archived = len(archived_ids)
                await self.index.forget(
                    agent_id, archived_ids, deadline=deadline, cancel=fence.token
                )
            step("audit")
            pruned = self.store.retain_audit(
                agent_id,
                keep=self.settings.audit_keep_per_agent,
                limit=self.settings.audit_prune_batch,
            )
            step("embed")
            await self.index.drain(agent_id, deadline=deadline, cancel=fence.token)
        except OperationCancelled:
            if fence.valid:
                raise
            return attrs.evolve(self._tallied(report, tally), stopped=True)
        report = attrs.evolve(self._tallied(report, tally), archived=archived, audit_pruned=pruned)
        self._record(report, all_failed=all_failed)
        return report

    @staticmethod
    def _tallied(report: PassReport, tally: PassTally) -> PassReport:
        return attrs.evolve(
            report,
            seeds=tally.seeds,
            settled=tally.settled,
            deferred=tally.deferred,
            merged=tally.merged,
            resolved=tally.resolved,
            reflected=tally.reflected,
            persona_drafts=tally.persona_drafts,
            llm_calls=tally.llm_calls,
            llm_failures=tally.llm_failures,
            input_tokens=tally.input_tokens,
        )

    def _record(self, report: PassReport, *, all_failed: bool) -> None:
        refs: dict[str, int | str | bool | None] = {
            "mode": report.mode.value,
            "seeds": report.seeds,
            "settled": report.settled,
            "deferred": report.deferred,
            "merged": report.merged,
            "resolved": report.resolved,
            "reflected": report.reflected,
            "persona_drafts": report.persona_drafts,
            "archived": report.archived,
            "llm_calls": report.llm_calls,
            "input_tokens": report.input_tokens,
        }
        if report.skipped is not None:
            refs["skipped"] = report.skipped
        now = self.now()
        if report.mode is PassMode.HEAVY:
            status = "failed" if all_failed else "completed"
            self.store.record_event(report.agent_id, HEAVY_EVENT, status=status, refs=refs, now=now)
        else:
            status = "skipped" if report.skipped is not None else "completed"
            self.store.record_event(report.agent_id, PASS_EVENT, status=status, refs=refs, now=now)


def within(last: datetime | None, now: datetime, seconds: float) -> bool:
    """`last` happened less than `seconds` before `now`."""
    return last is not None and now - last < timedelta(seconds=seconds)
