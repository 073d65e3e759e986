"""How one `PostgresVectorStore` call runs: refused before any work when it cannot succeed,
run under its deadline and token in the async session, and a corrupt namespace quarantined.

Searches also check the namespace generation in the same round trip: a namespace rebuilt or
dropped since the warm-up, by any process sharing the database, makes the certificate cold
(R-VEC-3, R-VEC-4). Every statement names its agent (R-PRIV-2).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg

from memory_adapters.postgres_store import approximate
from memory_adapters.postgres_store.async_session import AsyncSession, precheck
from memory_adapters.postgres_store.vector_certificates import Certificates
from memory_adapters.postgres_store.vector_namespace import Certified, hits_of
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import StoreError, StoreQuarantined
from memory_core.domain.scope import validate_agent_id
from memory_core.ports.vectors import ReadyCertificate, VectorHit, VectorStoreCold

__all__ = ["NamespaceCalls"]

_log = logging.getLogger(__name__)

T = TypeVar("T")


class NamespaceCalls:
    """The store's calls on its session, with the certificates they are checked against."""

    def __init__(self, session: AsyncSession, hnsw: approximate.HnswParameters) -> None:
        self._session = session
        self._hnsw = hnsw
        self.certificates = Certificates()

    def begin(
        self,
        agent_id: str,
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
        *,
        allow_quarantined: bool = False,
    ) -> None:
        """Refuse the call before any work: a closed store, a bad agent id, a quarantined
        namespace, a deadline or token already run out."""
        self._usable(agent_id, allow_quarantined=allow_quarantined)
        precheck(deadline, cancel, what)

    def certified(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Certified:
        """`begin` for a search: the certificate is checked before the deadline."""
        self._usable(agent_id)
        certified = self.certificates.held(agent_id, certificate)
        precheck(deadline, cancel, what)
        return certified

    async def run(
        self,
        agent_id: str,
        work: Callable[[psycopg.AsyncConnection], Awaitable[T]],
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> T:
        try:
            return await self._session.run(work, what=what, deadline=deadline, cancel=cancel)
        except StoreQuarantined:
            self.certificates.quarantine(agent_id)
            _log.error("vector namespace quarantined agent=%s", agent_id)
            raise

    async def search(
        self,
        agent_id: str,
        certified: Certified,
        statement: str | psycopg.sql.Composable,
        query: dict[str, object],
        *,
        top_k: int,
        answers: int,
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> list[list[VectorHit]]:
        """`answers` hit lists of at most `top_k` from a search statement, or VectorStoreCold
        when the namespace changed since the certificate's warm-up."""
        dim = certified.certificate.identity.dim
        params = {"agent": agent_id, "dim": dim, "k": top_k, **query}

        async def work(conn: psycopg.AsyncConnection) -> list[tuple[object, ...]]:
            if certified.approximate:
                await approximate.tune(conn, self._hnsw)
            return await (await conn.execute(statement, params)).fetchall()

        rows = await self.run(agent_id, work, what, deadline, cancel)
        hits = hits_of(rows, generation=certified.generation, answers=answers)
        if hits is None:
            # Rebuilt or dropped since the warm-up, possibly by another process.
            self.certificates.revoke(agent_id)
            raise VectorStoreCold(f"vector namespace of agent {agent_id!r} changed since warm-up")
        return hits

    def _usable(self, agent_id: str, *, allow_quarantined: bool = False) -> None:
        if self._session.closed:
            raise StoreError("vector store is closed")
        validate_agent_id(agent_id)
        if not allow_quarantined:
            self.certificates.refuse_quarantined(agent_id)
