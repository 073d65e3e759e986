"""The working projection a turn shows, read from its stored row (R-READ-9, R-MAINT-3).

A turn reads the agent's `StoredWorking` (one statement, beside its directives and
persona) and shows the stored snapshot when it still describes the claims: stored at the
agent's current source generation (`ports/claims/projection.py`), built with this
process's recipe (budget, source limit, temporal policy, suppress topics) and not yet past
its `next_refresh_at`. Otherwise — no row yet, a mutation since, a directive or a setting
changed, or a `valid_from`/`valid_until` boundary passed — the turn rebuilds it once from
the authoritative claims under its own deadline, exactly as `project_working` renders them,
and hands the result to a background compare-and-set store. The turn itself never writes:
a stale snapshot is never shown (a deleted or edited claim must not reappear, R-FORGET-1),
and a boundary refreshes what the turn shows without any write at all.

Off the turn, `schedule` rebuilds an agent's row after its mutations: debounced
(`working_refresh_debounce_seconds`, reference §8.7's 100 ms), so a burst of writes costs
one rebuild, and compare-and-set on the generation, so a rebuild that lost the race to a
later write is discarded rather than stored over it.

Suppress topics (R-DIR-2) are applied before rendering, as recall applies them, and the
topics in force are part of the recipe: a new or lifted suppress_topic makes the stored
snapshot unusable at once, without waiting for a rebuild.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus, match_text
from memory_core.domain.errors import AgentMemoryError
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.temporal_policy import TemporalPolicy
from memory_core.ports.blocking import BlockingCalls
from memory_core.ports.claims import (
    ClaimReader,
    DirectiveReader,
    HiddenClaim,
    StoredWorking,
    WorkingProjections,
    WorkingSnapshot,
)
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.scheduler import TaskHandle, TaskScheduler
from memory_core.services.read.projections import project_working
from memory_core.settings import MemorySettings

__all__ = ["WorkingMemory", "WorkingStore", "suppress_topics", "without_suppressed"]

log = logging.getLogger(__name__)

_RECIPES_MAX = 256  # distinct suppress-topic sets remembered


@runtime_checkable
class WorkingStore(ClaimReader, DirectiveReader, WorkingProjections, Protocol):
    """What a rebuild reads and writes: the working source, the directives, the row."""


def suppress_topics(directives: Sequence[Directive]) -> tuple[str, ...]:
    """The normalised topics of the runtime-eligible suppress_topic directives, sorted."""
    return tuple(
        sorted(
            {
                topic
                for directive in directives
                if directive.kind is DirectiveKind.SUPPRESS_TOPIC and directive.is_runtime_eligible
                if (topic := match_text(directive.topic or ""))
            }
        )
    )


def without_suppressed(
    claims: Sequence[Claim], topics: Sequence[str]
) -> tuple[list[Claim], tuple[HiddenClaim, ...]]:
    """`claims` minus those a topic matches (normalised substring, as in recall), and the
    ones it hid."""
    if not topics:  # the common case: no claim needs normalising
        return list(claims), ()
    kept: list[Claim] = []
    hidden: list[HiddenClaim] = []
    for claim in claims:
        text = match_text(claim.content)
        if any(topic in text for topic in topics):
            hidden.append(HiddenClaim(id=claim.id, kind=claim.kind))
        else:
            kept.append(claim)
    return kept, tuple(hidden)


class WorkingMemory:
    """The stored working projection of every agent of one service: how a turn reads it,
    how it is rebuilt, and the background rebuilds after mutations. Without a scheduler
    nothing runs in the background and rows are stored only by `rebuild`."""

    def __init__(
        self,
        *,
        store: WorkingStore,
        calls: BlockingCalls,
        domain_clock: DomainClock,
        infra_clock: InfraClock,
        settings: MemorySettings,
        scheduler: TaskScheduler | None,
    ) -> None:
        self._store = store
        self._calls = calls
        self._clock = domain_clock
        self._infra = infra_clock
        self._scheduler = scheduler
        self._limit = settings.working_source_limit
        self._budget = settings.working_ceiling_tokens
        self._policy = TemporalPolicy.from_settings(settings)
        self._debounce = settings.working_refresh_debounce_seconds
        self._seconds = settings.working_refresh_seconds
        self._recipes: dict[tuple[str, ...], str] = {}
        self._queued: set[str] = set()  # agents whose rebuild is waiting out the debounce
        self._pending: list[TaskHandle] = []
        self._closed = False

    # --- the rule --------------------------------------------------------------------------
    def recipe(self, topics: Sequence[str]) -> str:
        """The fingerprint of everything but the claims that shapes a snapshot. A hash:
        the row never holds the topics themselves. Asked on every turn, so remembered
        (topics change only with directives; the rest never in this process)."""
        key = tuple(topics)
        recipe = self._recipes.get(key)
        if recipe is None:
            shape = repr((self._budget, self._limit, self._policy, key))
            recipe = hashlib.sha256(shape.encode("utf-8", "surrogatepass")).hexdigest()
            if len(self._recipes) >= _RECIPES_MAX:
                self._recipes.clear()
            self._recipes[key] = recipe
        return recipe

    def source(self, agent_id: str) -> Sequence[Claim]:
        """The authoritative claims a projection is built from (a blocking store call)."""
        return self._store.list_claims(
            agent_id, scope_filter=ScopeFilter.agent_only(), limit=self._limit
        )

    def build(
        self, claims: Sequence[Claim], directives: Sequence[Directive], *, now: datetime
    ) -> WorkingSnapshot:
        """The snapshot of `claims` at `now` under `directives`' suppress topics."""
        topics = suppress_topics(directives)
        shown, hidden = without_suppressed(claims, topics)
        projection = project_working(
            shown, now=now, budget_tokens=self._budget, policy=self._policy
        )
        return WorkingSnapshot(
            text=projection.text,
            entries=projection.entries,
            estimated_tokens=projection.estimated_tokens,
            next_refresh_at=projection.next_refresh_at,
            built_at=now,
            recipe=self.recipe(topics),
            hidden=hidden,
        )

    def current(
        self, stored: StoredWorking, directives: Sequence[Directive], *, now: datetime
    ) -> WorkingSnapshot | None:
        """The stored snapshot if it is what `build` would give at `now`, else None."""
        snapshot = stored.snapshot
        if snapshot is None or snapshot.recipe != self.recipe(suppress_topics(directives)):
            return None
        # Before its build instant (a clock set back) a bound may lie between the two.
        if now < snapshot.built_at:
            return None
        if snapshot.next_refresh_at is not None and now >= snapshot.next_refresh_at:
            return None
        return snapshot

    # --- rebuilds ----------------------------------------------------------------------------
    async def rebuild(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> bool:
        """Rebuild the agent's row from its claims now unless it is current; True when the
        row is current afterwards, False when a mutation won the race (try again later)."""

        def read() -> tuple[StoredWorking, Sequence[Directive], Sequence[Claim] | None]:
            # The generation first: a mutation after it moves it, and the store refuses.
            stored = self._store.working_projection(agent_id)
            directives = self._store.list_directives(agent_id, status=DirectiveStatus.ACTIVE)
            if self.current(stored, directives, now=self._clock.now()) is not None:
                return stored, directives, None
            return stored, directives, self.source(agent_id)

        stored, directives, claims = await self._calls.run(read, deadline=deadline, cancel=cancel)
        if claims is None:
            return True
        snapshot = self.build(claims, directives, now=self._clock.now())
        return await self._calls.run(
            lambda: self.put(agent_id, snapshot, stored.generation),
            deadline=deadline,
            cancel=cancel,
        )

    def put(self, agent_id: str, snapshot: WorkingSnapshot, generation: int) -> bool:
        """Store `snapshot` compare-and-set (a blocking store call; see `keep`)."""
        # Generation 0 is an agent without a row: none is created to say it has nothing
        # (after a retirement that would bring its id back); its turns find that quickly.
        if generation == 0 and snapshot.text is None and not snapshot.hidden:
            return True
        return self._store.store_working_projection(agent_id, snapshot, generation=generation)

    def keep(self, agent_id: str, snapshot: WorkingSnapshot, *, generation: int) -> None:
        """Store a snapshot a turn built, in the background (the turn never writes)."""

        async def store() -> None:
            await self._calls.run(
                lambda: self.put(agent_id, snapshot, generation),
                deadline=Deadline.after(self._infra, self._seconds),
                cancel=CancellationToken(),
            )

        self._spawn(store, f"memory-working-keep:{agent_id}")

    def schedule(self, agent_id: str) -> None:
        """A mutation of the agent committed: rebuild its row once the writes pause."""
        scheduler = self._scheduler
        # A queued rebuild reads the generation after its wait: it covers this write too.
        if scheduler is None or self._closed or agent_id in self._queued:
            return

        async def debounced() -> None:
            try:
                await scheduler.sleep(self._debounce)
            finally:
                self._queued.discard(agent_id)
            await self.rebuild(
                agent_id,
                deadline=Deadline.after(self._infra, self._seconds),
                cancel=CancellationToken(),
            )

        if self._spawn(debounced, f"memory-working-rebuild:{agent_id}"):
            self._queued.add(agent_id)

    def _spawn(self, work: Callable[[], Awaitable[None]], name: str) -> bool:
        if self._scheduler is None or self._closed:  # no background work: not stored
            return False

        async def quietly() -> None:
            try:
                await work()
            except AgentMemoryError as exc:
                # A projection is rebuilt on the next turn or mutation: nothing is lost. The
                # type alone is logged, a message may quote content.
                log.info("working projection store skipped: %s", type(exc).__name__)

        self._pending = [handle for handle in self._pending if not handle.done]
        self._pending.append(self._scheduler.spawn(quietly, name=name))
        return True

    def close(self) -> None:
        """No new background work; `drain` waits for what runs."""
        self._closed = True

    async def drain(self) -> None:
        """Until background rebuilds and stores have settled (each has its deadline)."""
        while self._pending:
            pending, self._pending = self._pending, []
            for handle in pending:
                await handle.wait()
