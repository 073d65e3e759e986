"""The vector-cleanup queue as the vector index uses it: no vector of a forgotten claim
outlives a failed, cut or killed cleanup (R-FORGET-1, R-VEC-4).

Every path that may leave a vector its claim must not keep queues a content-free row first
(`EmbeddingBookkeeping.queue_vector_cleanup`): an embedding batch before it writes its
vectors, a delete before it commits, a forget, clear or retirement before it deletes vectors.
Each finishes only its own rows, once the vector's fate is settled. Whatever a failure, a
deadline or a kill leaves is finished by `finish`: the agent's next drain or warm-up (under
the agent's lock, so no batch is between its queue and its marks) and the start-up sweep;
doctor counts what is left.

Why not rely on the warm-up's coverage check alone: it runs only when an agent's
certificate is missing, so a namespace whose certificate stands — or an agent nobody reads
again — kept a deleted claim's vector indefinitely (the 900 s turn soak ended with four).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import AgentMemoryError, StoreError
from memory_core.ports.claims import WHOLE_NAMESPACE, CleanupSource, EmbeddingBookkeeping
from memory_core.ports.vectors import VectorStore

__all__ = ["CleanupQueue"]

log = logging.getLogger(__name__)

# Rows read per agent and per sweep: a drain batch queues at most its batch size per agent.
CLEANUP_PAGE = 1_000


class CleanupQueue:
    """Queues, finishes and sweeps one store's cleanup rows; remembers which agents have
    some left, so a drain pays no query when none are."""

    def __init__(
        self,
        *,
        store: EmbeddingBookkeeping,
        vectors: VectorStore | None,
        on_dropped: Callable[[str], None],
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._on_dropped = on_dropped  # the namespace went: its certificate with it
        self._behind: set[str] | None = None  # None: not read from the store yet

    def queue(self, agent_id: str, claim_ids: Sequence[str], source: CleanupSource) -> None:
        """Queue the rows. A claim store refusing the write is logged and the caller goes on:
        its vector delete is still tried, and a failing one also drops the certificate, so
        the next warm-up's coverage check removes what is left (no durable row then)."""
        if self._vectors is None or not claim_ids:
            return
        try:
            self._store.queue_vector_cleanup(agent_id, claim_ids, source=source)
        except StoreError as exc:
            log.warning("vector cleanup not queued for agent %s: %s", agent_id, type(exc).__name__)

    def finish(self, agent_id: str, claim_ids: Sequence[str], source: CleanupSource) -> None:
        """The vectors' fate is settled; rows a failing store keeps are swept later (their
        vectors are gone already, so the sweep's delete finds nothing)."""
        if self._vectors is None or not claim_ids:
            return
        try:
            self._store.finish_vector_cleanup(agent_id, claim_ids, source=source)
        except StoreError as exc:
            log.warning("vector cleanup left for agent %s: %s", agent_id, type(exc).__name__)
            self.left(agent_id)

    def left(self, agent_id: str) -> None:
        """The agent has rows a later pass must finish."""
        if self._behind is not None:
            self._behind.add(agent_id)

    def behind(self, agent_id: str) -> bool:
        """Whether the agent may have unfinished rows; read from the store once."""
        if self._vectors is None:
            return False
        if self._behind is None:
            try:
                rows = self._store.pending_vector_cleanups(limit=CLEANUP_PAGE)
            except StoreError:
                return True  # unknown: the sweep itself finds out
            self._behind = {row.agent_id for row in rows}
        return agent_id in self._behind

    def agents(self) -> list[str]:
        """Agents with rows now (the start-up sweep's list)."""
        rows = self._store.pending_vector_cleanups(limit=CLEANUP_PAGE)
        found = list(dict.fromkeys(row.agent_id for row in rows))
        self._behind = set(found) | (self._behind or set())
        return found

    async def sweep(self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken) -> int:
        """Finish the agent's rows: delete the vectors of claims not READY (the whole
        namespace for a clear's or retirement's row), then remove the rows. Call holding the
        agent's lock, so no embedding batch is between its queue and its marks. Returns the
        claim ids settled (one page); a failure is logged and leaves the rows."""
        if self._vectors is None:
            return 0
        try:
            rows = self._store.pending_vector_cleanups(agent_id, limit=CLEANUP_PAGE)
            ids = [row.claim_id for row in rows]
            kept = [row.claim_id for row in rows if row.keep]
            if WHOLE_NAMESPACE in ids:
                await self._vectors.drop_agent(agent_id, deadline=deadline, cancel=cancel)
                self._on_dropped(agent_id)
                kept = []
            gone = [claim_id for claim_id in ids if claim_id not in kept]
            if gone and WHOLE_NAMESPACE not in ids:
                await self._vectors.delete(agent_id, gone, deadline=deadline, cancel=cancel)
            # A gone id's vector was deleted after its rows were read, under the lock no
            # batch writes without: every row of it is settled, whoever queued it. A kept id
            # settles only a batch's row: a delete that queued its own row meanwhile still
            # owes its vector delete.
            self._store.finish_vector_cleanup(agent_id, gone, source=None)
            self._store.finish_vector_cleanup(agent_id, kept, source=CleanupSource.DRAIN)
        except AgentMemoryError as exc:
            log.warning("vector cleanup deferred for agent %s: %s", agent_id, type(exc).__name__)
            self.left(agent_id)
            return 0
        if len(rows) == CLEANUP_PAGE:
            self.left(agent_id)  # a full page: the next pass takes the rest
        elif self._behind is not None:
            self._behind.discard(agent_id)
        if ids:
            log.info("vector cleanup for agent %s: %d ids settled", agent_id, len(ids))
        return len(ids)
