"""The pgvector store beyond its contract: shared-database certificates, server-side deadlines,
cancellation of a waiting statement, the exact default path and the approximate opt-in."""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Callable

import psycopg
import pytest
from psycopg import sql

from memory_adapters.clocks import MonotonicClock
from memory_adapters.postgres_store import (
    ConnectionSettings,
    PostgresVectorStore,
    approximate,
    vector_sql,
)
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled
from memory_core.ports.vectors import VectorHealth, VectorStoreCold

IDENTITY = EmbeddingIdentity(provider="test", model="m", dim=8)
Opener = Callable[..., PostgresVectorStore]


def _calls(clock: object, seconds: float = 30.0) -> dict[str, object]:
    return {"deadline": Deadline.after(clock, seconds), "cancel": CancellationToken()}  # type: ignore[arg-type]


def _vectors(count: int, seed: int = 7) -> dict[str, list[float]]:
    rng = random.Random(seed)
    return {f"c{i:05d}": [rng.uniform(-1, 1) for _ in range(IDENTITY.dim)] for i in range(count)}


def test_a_rebuild_by_another_store_object_turns_the_certificate_cold(
    open_vectors: Opener, clock: ManualClock
) -> None:
    """R-VEC-4, R-BEYOND-4: processes sharing the database never serve a stale namespace —
    the certificate is bound to the namespace generation stored in the database."""

    async def scenario() -> None:
        mine, theirs = open_vectors(), open_vectors()
        try:
            await mine.upsert("agent-1", IDENTITY, _vectors(3), **_calls(clock))
            report = await mine.warm(
                "agent-1", IDENTITY, list(_vectors(3)), config_generation=1, **_calls(clock)
            )
            query = _vectors(1, seed=1)["c00000"]
            assert await mine.query("agent-1", report.certificate, query, 2, **_calls(clock))
            await theirs.rebuild("agent-1", IDENTITY, **_calls(clock))
            with pytest.raises(VectorStoreCold):
                await mine.query("agent-1", report.certificate, query, 2, **_calls(clock))
        finally:
            await mine.aclose()
            await theirs.aclose()

    asyncio.run(scenario())


def _hold_namespace_lock(settings: ConnectionSettings) -> psycopg.Connection:
    holder = psycopg.connect(settings.dsn)  # a transaction stays open until rollback
    holder.execute(
        f"SELECT 1 FROM {settings.schema}.agent_memory_vector_namespace"
        " WHERE agent_id = 'agent-1' FOR UPDATE"
    )
    return holder


def test_a_call_blocked_past_its_deadline_is_stopped_by_the_server(
    open_vectors: Opener, settings: ConnectionSettings, clock: ManualClock
) -> None:
    """R-VEC-3, R-ARCH-2: the deadline becomes the statement timeout; the call fails typed,
    on time, and the store keeps working once the lock is gone."""
    real = MonotonicClock()

    async def scenario() -> None:
        store = open_vectors()
        try:
            await store.upsert("agent-1", IDENTITY, _vectors(2), **_calls(clock))
            holder = _hold_namespace_lock(settings)
            try:
                started = time.monotonic()
                with pytest.raises(DeadlineExceeded):
                    await store.upsert("agent-1", IDENTITY, _vectors(1, 3), **_calls(real, 0.3))
                assert time.monotonic() - started < 10  # the lock is never released
            finally:
                holder.rollback()
                holder.close()
            assert store.health("agent-1") is VectorHealth.AVAILABLE
            assert len(await store.list_ids("agent-1", **_calls(clock))) == 2
        finally:
            await store.aclose()

    asyncio.run(scenario())


def test_cancelling_the_token_interrupts_a_waiting_statement(
    open_vectors: Opener, settings: ConnectionSettings, clock: ManualClock
) -> None:
    """R-PROV-3: cancellation reaches a statement already running on the server."""

    async def scenario() -> None:
        store = open_vectors()
        try:
            await store.upsert("agent-1", IDENTITY, _vectors(2), **_calls(clock))
            holder = _hold_namespace_lock(settings)
            try:
                token = CancellationToken()
                asyncio.get_running_loop().call_later(0.2, token.cancel, "turn abandoned")
                started = time.monotonic()
                with pytest.raises(OperationCancelled):
                    await store.upsert(
                        "agent-1",
                        IDENTITY,
                        _vectors(1, 3),
                        deadline=Deadline.after(clock, 60.0),
                        cancel=token,
                    )
                assert time.monotonic() - started < 10  # the lock is never released
            finally:
                holder.rollback()
                holder.close()
            assert await store.list_ids("agent-1", **_calls(clock)) == ["c00000", "c00001"]
        finally:
            await store.aclose()

    asyncio.run(scenario())


def _plan(
    settings: ConnectionSettings,
    statement: str | sql.Composable,
    params: dict[str, object],
    *,
    planner: tuple[tuple[str, str], ...],
) -> str:
    query = statement if isinstance(statement, sql.Composable) else sql.SQL(statement)  # type: ignore[arg-type]
    with psycopg.connect(settings.dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {settings.schema}, public")
        for name, value in planner:
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        rows = conn.execute(sql.SQL("EXPLAIN ") + query, params).fetchall()
    return "\n".join(row[0] for row in rows)


def test_the_default_query_is_exact_even_beside_an_approximate_index(
    open_vectors: Opener, settings: ConnectionSettings, clock: ManualClock
) -> None:
    """R-VEC-1, R-ARCH-6: the exact statements carry no approximate operator class and no
    plan of theirs uses an HNSW index, even one built for the very same agent."""
    assert "hnsw" not in inspect.getsource(vector_sql).lower()

    async def scenario() -> None:
        store = open_vectors()
        try:
            await store.upsert("agent-1", IDENTITY, _vectors(300), **_calls(clock))
            await store.enable_approximate_search("agent-1", **_calls(clock))
        finally:
            await store.aclose()

    asyncio.run(scenario())
    params = {"agent": "agent-1", "vectors": ["[" + ",".join(["0.5"] * 8) + "]"], "dim": 8, "k": 5}
    # Even with every exact alternative discouraged, the exact statement cannot use the index.
    exact = _plan(settings, vector_sql.BATCH_QUERY, params, planner=approximate.PLANNER_SETTINGS)
    assert approximate.index_name("agent-1") not in exact
    assert "hnsw" not in exact.lower()
    approximate_plan = _plan(
        settings,
        approximate.batch_query("agent-1", IDENTITY),
        params,
        planner=approximate.PLANNER_SETTINGS,
    )
    assert approximate.index_name("agent-1") in approximate_plan


def test_approximate_search_is_opt_in_per_agent_and_a_rebuild_ends_it(
    open_vectors: Opener, clock: ManualClock
) -> None:
    """R-VEC-1: only the opted-in agent is served approximately; its neighbours are still
    found; a rebuild returns it to the exact scan."""

    async def scenario() -> None:
        store = open_vectors()
        try:
            vectors = _vectors(400)
            for agent in ("agent-1", "agent-2"):
                await store.upsert(agent, IDENTITY, vectors, **_calls(clock))
            await store.enable_approximate_search("agent-1", **_calls(clock))
            answers = {}
            for agent in ("agent-1", "agent-2"):
                report = await store.warm(
                    agent, IDENTITY, list(vectors), config_generation=1, **_calls(clock)
                )
                hits = await store.query(
                    agent, report.certificate, vectors["c00042"], 5, **_calls(clock)
                )
                answers[agent] = [hit.claim_id for hit in hits]
            assert answers["agent-2"][0] == "c00042"
            assert "c00042" in answers["agent-1"]
            await store.rebuild("agent-1", IDENTITY, **_calls(clock))
            assert await store.list_ids("agent-1", **_calls(clock)) == []
        finally:
            await store.aclose()

    asyncio.run(scenario())
