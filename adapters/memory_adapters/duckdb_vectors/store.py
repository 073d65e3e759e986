"""`DuckDBVectorStore`: the VectorStore port over one DuckDB v2 file per agent.

DuckDB is the durable store; queries scan a resident numpy matrix per agent, filled at
warm-up and kept in step with every upsert and delete (R-VEC-1). Every native call runs in a
worker thread under the caller's deadline and cancellation (R-VEC-3, see `guard`); opening,
the open-store cap and quarantine live in `agents`. Queries answer only for the agent's
current ready certificate (R-VEC-4).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import ValidationError
from memory_core.ports.clock import InfraClock
from memory_core.ports.vectors import (
    ReadyCertificate,
    VectorHealth,
    VectorHit,
    VectorStoreCold,
    WarmReport,
)

from .agents import Agents
from .guard import AbortFlag
from .matrix import ResidentMatrix
from .publish import StepHook
from .validation import as_query_matrix, as_rows

__all__ = ["DuckDBVectorStore"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

# Orphans (warm-up) and explicit deletes go in pages, each its own short transaction, so a
# deadline stops a large delete between pages with the finished pages kept.
ORPHAN_PAGE = 512
DELETE_PAGE = 512
# Up to this many bytes a scan runs inline. A worker thread cost a turn 0.4 ms more than
# the same scan inline at 100k rows of 384 floats (153 MB, a 4-7 ms scan on 2 cores) and
# bought no overlap: BLAS already spreads one scan over every core. A scan this size blocks
# the loop no longer than the FTS statements that run inline anyway; a larger one (a
# million rows: ~60 ms) leaves the loop.
INLINE_SCAN_BYTES = 256 << 20


class DuckDBVectorStore:
    """Exact cosine search over `<root>/<agentId>.v2.duckdb` files (or, with `root=None`,
    private in-memory databases that vanish on close).

    `grace_seconds` bounds how long an interrupted native call may take to settle before
    its agent is quarantined; `housekeeping_seconds` is the deadline of closes the store
    starts itself (eviction, `aclose`); `on_step` is the crash-test seam (publish and
    migration call it at each named step); `scrub_delay_seconds` is how long after a delete
    the file is rewritten without the deleted rows (deletes within it share one rewrite).
    """

    def __init__(
        self,
        root: Path | None,
        clock: InfraClock,
        *,
        max_open: int = 8,
        grace_seconds: float = 30.0,
        housekeeping_seconds: float = 30.0,
        migration_page_rows: int = 512,
        on_step: StepHook | None = None,
        scrub_delay_seconds: float = 2.0,
    ) -> None:
        self._agents = Agents(
            root,
            clock,
            max_open=max_open,
            grace_seconds=grace_seconds,
            housekeeping_seconds=housekeeping_seconds,
            migration_page_rows=migration_page_rows,
            on_step=on_step,
            scrub_delay_seconds=scrub_delay_seconds,
        )
        self._scans: ThreadPoolExecutor | None = None

    @classmethod
    def in_memory(cls, clock: InfraClock, *, grace_seconds: float = 30.0) -> DuckDBVectorStore:
        """The same store without files: namespaces are lost on `drop_agent` or `aclose`."""
        return cls(None, clock, grace_seconds=grace_seconds)

    @property
    def root(self) -> Path | None:
        return self._agents.root

    async def warm(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        authoritative_ids: Collection[str],
        *,
        config_generation: int,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> WarmReport:
        agent = self._agents.get(agent_id)
        _precheck(deadline, cancel, "warm")
        wanted = _id_set(authoritative_ids, "authoritative_ids")
        async with agent.lock:
            if not wanted and await self._agents.find(agent, deadline, cancel) is None:
                # Nothing to serve and no file yet: a read of an unknown (misspelt) agent
                # creates no storage (R-HOST-2); its first upsert creates the namespace.
                raise VectorStoreCold(f"agent {agent_id!r} has no vector namespace yet")
            store = await self._agents.require(agent, identity, deadline, cancel)
            if store.matrix is None:
                matrix, unusable = await self._agents.run(
                    agent, store.read_matrix, what="warm", deadline=deadline, cancel=cancel
                )
                store.matrix = matrix
            else:
                matrix, unusable = store.matrix, []
            extras = sorted(matrix.id_set() - wanted) + sorted(unusable)
            deleted = 0
            for start in range(0, len(extras), ORPHAN_PAGE):
                page = extras[start : start + ORPHAN_PAGE]
                removed = await self._agents.run(
                    agent,
                    _bound(store.delete, page),
                    what="orphans",
                    deadline=deadline,
                    cancel=cancel,
                )
                deleted += len(removed)
            if deleted:
                self._agents.scrub_soon(agent)
            certificate = ReadyCertificate(
                agent_id=agent_id,
                identity=identity,
                store_generation=store.generation,
                config_generation=config_generation,
            )
            store.certificate, agent.parked = certificate, None
            missing = tuple(sorted(wanted - matrix.id_set()))
            _log.info(
                "vector warm-up agent=%s vectors=%d missing=%d orphans_deleted=%d",
                agent_id,
                len(matrix),
                len(missing),
                deleted,
            )
            return WarmReport(
                certificate=certificate,
                missing_ids=missing,
                orphans_deleted=deleted,
                vector_count=len(matrix),
            )

    async def upsert(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        vectors: Mapping[str, Sequence[float]],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        agent = self._agents.get(agent_id)
        _precheck(deadline, cancel, "upsert")
        ids, rows = as_rows(vectors, identity.dim)
        if not ids:
            return
        async with agent.lock:
            store = await self._agents.require(agent, identity, deadline, cancel)
            await self._agents.run(
                agent,
                lambda abort: store.write(ids, rows, abort),
                what="upsert",
                deadline=deadline,
                cancel=cancel,
            )

    async def delete(
        self,
        agent_id: str,
        claim_ids: Collection[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        agent = self._agents.get(agent_id)
        _precheck(deadline, cancel, "delete")
        ids = sorted(_id_set(claim_ids, "claim_ids"))
        if not ids:
            return 0
        async with agent.lock:
            store = await self._agents.find(agent, deadline, cancel)
            if store is None:
                return 0
            deleted = 0
            try:
                for start in range(0, len(ids), DELETE_PAGE):
                    page = ids[start : start + DELETE_PAGE]
                    removed = await self._agents.run(
                        agent,
                        _bound(store.delete, page),
                        what="delete",
                        deadline=deadline,
                        cancel=cancel,
                    )
                    deleted += len(removed)
            finally:
                # Pages that committed before a failure are scrubbed like a whole delete.
                if deleted:
                    self._agents.scrub_soon(agent)
            return deleted

    async def query(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        vector: Sequence[float],
        top_k: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[VectorHit]:
        matrix = await self._certified(agent_id, certificate, deadline, cancel)
        (answer,) = await self._scan(
            matrix, [vector], top_k, (), what="query", deadline=deadline, cancel=cancel
        )
        return answer

    async def query_batch(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        vectors: Sequence[Sequence[float]],
        top_k: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[VectorHit]]:
        matrix = await self._certified(agent_id, certificate, deadline, cancel)
        return await self._scan(
            matrix, vectors, top_k, (), what="query_batch", deadline=deadline, cancel=cancel
        )

    async def query_by_id(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        claim_id: str,
        top_k: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[VectorHit]:
        matrix = await self._certified(agent_id, certificate, deadline, cancel)
        vector = matrix.row(claim_id)
        if vector is None:
            _precheck(deadline, cancel, "query_by_id")
            _check_top_k(top_k)
            return []
        (answer,) = await self._scan(
            matrix,
            [vector],
            top_k,
            (claim_id,),
            what="query_by_id",
            deadline=deadline,
            cancel=cancel,
        )
        return answer

    async def list_ids(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[str]:
        agent = self._agents.get(agent_id)
        _precheck(deadline, cancel, "list_ids")
        async with agent.lock:
            store = await self._agents.find(agent, deadline, cancel)
            if store is None:
                return []
            return await self._agents.run(
                agent, store.list_ids, what="list_ids", deadline=deadline, cancel=cancel
            )

    async def stored_identity(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> EmbeddingIdentity | None:
        agent = self._agents.get(agent_id)
        _precheck(deadline, cancel, "stored_identity")
        async with agent.lock:
            store = await self._agents.find(agent, deadline, cancel)
            return None if store is None else store.identity

    async def rebuild(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        agent = self._agents.get(agent_id)
        _precheck(deadline, cancel, "rebuild")
        async with agent.lock:
            await self._agents.rebuild(agent, identity, deadline, cancel)
        _log.info("vector store rebuilt empty agent=%s dim=%d", agent_id, identity.dim)

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        # A quarantined agent can still be retired: its files go, it stays closed.
        agent = self._agents.get(agent_id, allow_quarantined=True)
        _precheck(deadline, cancel, "drop_agent")
        async with agent.lock:
            await self._agents.drop(agent, deadline, cancel)

    def health(self, agent_id: str) -> VectorHealth:
        return self._agents.health(agent_id)

    async def aclose(self) -> None:
        await self._agents.close_all()
        if self._scans is not None:
            self._scans.shutdown(wait=False, cancel_futures=True)

    def _scan_pool(self) -> ThreadPoolExecutor:
        # One scan at a time: parallel scans would only share the same memory bandwidth.
        if self._scans is None:
            self._scans = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-scan")
        return self._scans

    async def _certified(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> ResidentMatrix:
        agent = self._agents.get(agent_id)
        store = agent.store
        if (
            store is not None
            and store.matrix is not None
            and store.certificate is not None
            and certificate == store.certificate
        ):
            self._agents.touch(agent)
            return store.matrix
        # Evicted by the open-store cap since its warm-up: reopen it under the caller's
        # deadline rather than leave the agent FTS-only until some later warm-up (R-VEC-4).
        if agent.parked is None or agent.parked != certificate:
            raise VectorStoreCold(f"vector store of agent {agent_id!r} has no ready certificate")
        _precheck(deadline, cancel, "resume")
        async with agent.lock:
            store = await self._agents.resume(agent, certificate, deadline, cancel)
        assert store.matrix is not None
        return store.matrix

    async def _scan(
        self,
        matrix: ResidentMatrix,
        vectors: Sequence[Sequence[float]],
        top_k: int,
        exclude: Sequence[str],
        *,
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> list[list[VectorHit]]:
        _precheck(deadline, cancel, what)
        _check_top_k(top_k)
        queries = as_query_matrix(vectors, matrix.dim)
        if matrix.nbytes() * max(1, len(queries)) <= INLINE_SCAN_BYTES:
            answers = matrix.top_k(queries, top_k, exclude=exclude)
        else:
            answers = await self._agents.guard.run_pooled(
                self._scan_pool(),
                lambda: matrix.top_k(queries, top_k, exclude=exclude),
                what=what,
                deadline=deadline,
                cancel=cancel,
            )
        return [
            [VectorHit(claim_id=claim_id, similarity=score) for claim_id, score in answer]
            for answer in answers
        ]


def _precheck(deadline: Deadline, cancel: CancellationToken, what: str) -> None:
    cancel.raise_if_cancelled()
    deadline.raise_if_expired(f"vector store {what}")


def _check_top_k(top_k: int) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise ValidationError("top_k", "must be a non-negative integer")


def _id_set(ids: Collection[str], field: str) -> set[str]:
    if isinstance(ids, str):
        raise ValidationError(field, "must be a collection of claim ids, not one string")
    wanted = set(ids)
    if any(not isinstance(claim_id, str) or not claim_id for claim_id in wanted):
        raise ValidationError(field, "claim ids must be non-empty strings")
    return wanted


def _bound(
    method: Callable[[Sequence[str], AbortFlag], T], ids: Sequence[str]
) -> Callable[[AbortFlag], T]:
    return lambda abort: method(ids, abort)
