"""`PostgresVectorStore`: the VectorStore port on pgvector, one table for every agent.

Each agent's namespace is its row in `agent_memory_vector_namespace` (identity and
generation) plus its rows in `agent_memory_vector`; every statement names the agent
(R-PRIV-2). Queries scan the agent's vectors exactly (R-VEC-1) unless an operator opted
that agent into the approximate index (`approximate`). A certificate is held in this
process and bound to the namespace generation in the database, so a rebuild or drop by
any process sharing the database turns it cold (R-VEC-4). Calls run under their deadline
and cancellation (`async_session`), never hang, and raise domain errors only (R-VEC-3).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime

import psycopg

from memory_adapters.postgres_store import approximate, vector_sql
from memory_adapters.postgres_store.async_session import AsyncSession
from memory_adapters.postgres_store.connection import ConnectionSettings, connect
from memory_adapters.postgres_store.migrations import migrate
from memory_adapters.postgres_store.vector_calls import NamespaceCalls
from memory_adapters.postgres_store.vector_namespace import (
    Namespace,
    lock_namespace,
)
from memory_adapters.postgres_store.vector_schema import (
    COMPONENT,
    MIGRATIONS,
    REQUIRED_EXTENSIONS,
)
from memory_adapters.postgres_store.vector_values import (
    check_top_k,
    claim_id_set,
    query_texts,
    vector_rows,
)
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import StoreError
from memory_core.ports.vectors import (
    ReadyCertificate,
    VectorHealth,
    VectorHit,
    WarmReport,
)

__all__ = ["PostgresVectorStore"]

_log = logging.getLogger(__name__)


class PostgresVectorStore:
    """Exact cosine search over pgvector rows, one namespace per agent.

    Opening runs the `vectors` migrations (creating the `vector` extension if it is
    missing and this role may). `grace_seconds` bounds how long an interrupted call may
    take to settle before its connection is dropped; `on_close` runs once after `aclose`
    (the plugin releases an embedded server there).
    """

    def __init__(
        self,
        settings: ConnectionSettings,
        *,
        grace_seconds: float = 5.0,
        hnsw: approximate.HnswParameters | None = None,
        extension_schema: str = "public",
        on_close: Callable[[], None] | None = None,
        now: datetime | None = None,
    ) -> None:
        if grace_seconds < 0:
            raise ValueError("grace_seconds must be >= 0")
        with connect(settings) as conn:
            extensions = migrate(
                conn,
                schema=settings.schema,
                component=COMPONENT,
                migrations=MIGRATIONS,
                required_extensions=REQUIRED_EXTENSIONS,
                extension_schema=extension_schema,
                now=now,
            )
        self._session = AsyncSession(settings, extensions.schemas, grace_seconds=grace_seconds)
        self._hnsw = hnsw or approximate.HnswParameters()
        self._calls = NamespaceCalls(self._session, self._hnsw)
        self._certs = self._calls.certificates
        self._on_close = on_close

    # --- namespace life ------------------------------------------------------------------
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
        self._calls.begin(agent_id, "warm", deadline, cancel)
        wanted = claim_id_set(authoritative_ids, "authoritative_ids")

        async def work(conn: psycopg.AsyncConnection) -> tuple[Namespace, int, set[str]]:
            namespace = await lock_namespace(conn, agent_id, identity, exclusive=True)
            assert namespace is not None
            orphans = await (
                await conn.execute(vector_sql.DELETE_ORPHANS, (agent_id, wanted))
            ).fetchall()
            present = await (
                await conn.execute(vector_sql.PRESENT_IDS, (agent_id, wanted))
            ).fetchall()
            return namespace, len(orphans), {row[0] for row in present}

        namespace, deleted, present = await self._calls.run(
            agent_id, work, "warm", deadline, cancel
        )
        certificate = self._certs.grant(
            agent_id, identity, namespace, config_generation=config_generation
        )
        missing = tuple(sorted(set(wanted) - present))
        _log.info(
            "vector warm-up agent=%s vectors=%d missing=%d orphans_deleted=%d",
            agent_id,
            len(present),
            len(missing),
            deleted,
        )
        return WarmReport(
            certificate=certificate,
            missing_ids=missing,
            orphans_deleted=deleted,
            vector_count=len(present),
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
        self._calls.begin(agent_id, "upsert", deadline, cancel)
        ids, texts = vector_rows(vectors, identity.dim)
        if not ids:
            return

        async def work(conn: psycopg.AsyncConnection) -> None:
            await lock_namespace(conn, agent_id, identity, exclusive=False)
            await conn.execute(
                vector_sql.UPSERT,
                {"agent": agent_id, "dim": identity.dim, "ids": ids, "vectors": texts},
            )

        await self._calls.run(agent_id, work, "upsert", deadline, cancel)

    async def delete(
        self,
        agent_id: str,
        claim_ids: Collection[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> int:
        self._calls.begin(agent_id, "delete", deadline, cancel)
        ids = claim_id_set(claim_ids, "claim_ids")
        if not ids:
            return 0

        async def work(conn: psycopg.AsyncConnection) -> int:
            rows = await (await conn.execute(vector_sql.DELETE_IDS, (agent_id, ids))).fetchall()
            return len(rows)

        return await self._calls.run(agent_id, work, "delete", deadline, cancel)

    async def rebuild(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> None:
        self._calls.begin(agent_id, "rebuild", deadline, cancel)
        self._certs.revoke(agent_id)

        async def work(conn: psycopg.AsyncConnection) -> None:
            await lock_namespace(conn, agent_id, None, exclusive=True)
            await approximate.drop_index(conn, agent_id)
            await conn.execute("DELETE FROM agent_memory_vector WHERE agent_id = %s", (agent_id,))
            await conn.execute(
                vector_sql.REBUILD_NAMESPACE,
                (agent_id, identity.provider, identity.model, identity.dim),
            )

        await self._calls.run(agent_id, work, "rebuild", deadline, cancel)
        _log.info("vector namespace rebuilt empty agent=%s dim=%d", agent_id, identity.dim)

    async def drop_agent(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        # A quarantined agent can still be retired.
        self._calls.begin(agent_id, "drop_agent", deadline, cancel, allow_quarantined=True)
        self._certs.revoke(agent_id)

        async def work(conn: psycopg.AsyncConnection) -> None:
            await approximate.drop_index(conn, agent_id)
            await conn.execute(vector_sql.DROP_NAMESPACE, (agent_id,))  # cascades to vectors

        await self._calls.run(agent_id, work, "drop_agent", deadline, cancel)

    # --- queries -------------------------------------------------------------------------
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
        (answer,) = await self._scan(
            agent_id, certificate, [vector], top_k, deadline=deadline, cancel=cancel
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
        return await self._scan(
            agent_id, certificate, vectors, top_k, deadline=deadline, cancel=cancel
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
        certified = self._calls.certified(agent_id, certificate, "query_by_id", deadline, cancel)
        check_top_k(top_k)
        if top_k == 0:
            return []
        statement = (
            approximate.by_id_query(agent_id, certificate.identity)
            if certified.approximate
            else vector_sql.BY_ID_QUERY
        )
        (answer,) = await self._calls.search(
            agent_id,
            certified,
            statement,
            {"id": claim_id},
            top_k=top_k,
            answers=1,
            what="query_by_id",
            deadline=deadline,
            cancel=cancel,
        )
        return answer

    async def list_ids(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[str]:
        self._calls.begin(agent_id, "list_ids", deadline, cancel)

        async def work(conn: psycopg.AsyncConnection) -> list[str]:
            rows = await (await conn.execute(vector_sql.LIST_IDS, (agent_id,))).fetchall()
            return [row[0] for row in rows]

        return await self._calls.run(agent_id, work, "list_ids", deadline, cancel)

    async def stored_identity(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> EmbeddingIdentity | None:
        self._calls.begin(agent_id, "stored_identity", deadline, cancel)

        async def work(conn: psycopg.AsyncConnection) -> EmbeddingIdentity | None:
            namespace = await lock_namespace(conn, agent_id, None, exclusive=False)
            return None if namespace is None else namespace.identity

        return await self._calls.run(agent_id, work, "stored_identity", deadline, cancel)

    # --- the approximate opt-in (beyond the port) -----------------------------------------
    async def enable_approximate_search(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        """APPROXIMATE from here on: build an HNSW index for this agent's namespace and
        answer its queries through it (see `approximate`). For namespaces too large for an
        exact scan within the turn's deadline; building takes time proportional to the
        namespace, so give it a generous deadline. Certificates stay valid; queries after
        the next warm-up use the index."""
        self._calls.begin(agent_id, "enable_approximate_search", deadline, cancel)

        async def work(conn: psycopg.AsyncConnection) -> None:
            namespace = await lock_namespace(conn, agent_id, None, exclusive=True)
            if namespace is None:
                raise StoreError(f"agent {agent_id!r} has no vector namespace")
            await approximate.build_index(conn, agent_id, namespace.identity.dim, self._hnsw)

        await self._calls.run(agent_id, work, "enable_approximate_search", deadline, cancel)
        _log.warning("vector namespace agent=%s switched to APPROXIMATE search", agent_id)

    async def disable_approximate_search(
        self, agent_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        """Back to the exact scan: the index is dropped."""
        self._calls.begin(agent_id, "disable_approximate_search", deadline, cancel)

        async def work(conn: psycopg.AsyncConnection) -> None:
            await lock_namespace(conn, agent_id, None, exclusive=True)
            await approximate.drop_index(conn, agent_id)

        await self._calls.run(agent_id, work, "disable_approximate_search", deadline, cancel)
        self._certs.revoke(agent_id)

    def health(self, agent_id: str) -> VectorHealth:
        if self._session.closed:
            return VectorHealth.STOPPED
        if self._certs.is_quarantined(agent_id):
            return VectorHealth.QUARANTINED
        return VectorHealth.SUSPECT if self._session.suspect else VectorHealth.AVAILABLE

    async def aclose(self) -> None:
        if self._session.closed:
            return
        self._certs.revoke_all()
        try:
            await self._session.aclose()
        finally:
            if self._on_close is not None:
                callback, self._on_close = self._on_close, None
                callback()

    async def _scan(
        self,
        agent_id: str,
        certificate: ReadyCertificate,
        vectors: Sequence[Sequence[float]],
        top_k: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> list[list[VectorHit]]:
        certified = self._calls.certified(agent_id, certificate, "query", deadline, cancel)
        check_top_k(top_k)
        texts = query_texts(vectors, certificate.identity.dim)
        if top_k == 0 or not texts:
            return [[] for _ in texts]
        statement = (
            approximate.batch_query(agent_id, certificate.identity)
            if certified.approximate
            else vector_sql.BATCH_QUERY
        )
        return await self._calls.search(
            agent_id,
            certified,
            statement,
            {"vectors": texts},
            top_k=top_k,
            answers=len(texts),
            what="query",
            deadline=deadline,
            cancel=cancel,
        )
