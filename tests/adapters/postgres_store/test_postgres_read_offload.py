"""A turn on PostgreSQL never waits on the database past its soft deadline: with the claims
table locked by another session, `prepare_turn` fails open in time with the store timeout
recorded, the blocked statement is cancelled, and once the lock goes the next turn recalls
normally on the same connection (R-READ-1, R-HOST-1, R-BEYOND-4)."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import threading
import time
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

import memory_plugins.builtin
from memory_adapters.offload import InlineCalls, ThreadedCalls
from memory_adapters.postgres_store import ConnectionSettings
from memory_adapters.postgres_store.connection import connect
from memory_adapters.postgres_store.interrupt import StatementGate
from memory_adapters.postgres_store.testing import ThrowawayServer
from memory_core.domain.manifest import Degradation
from memory_core.services.read.runtime import ContributionOutcome
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry

AGENT = "assistant"
SOFT_DEADLINE_S = 2.0
# Generous on purpose: this checks that the deadline holds, not how fast the machine is.
MARGIN_S = 2.0
LOCK_HELD_S = 10.0
QUESTION = "Who is my dentist?"


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    modules = [
        importlib.import_module(f"memory_plugins.builtin.{info.name}")
        for info in pkgutil.iter_modules(memory_plugins.builtin.__path__)
    ]
    return load_plugins(strict=True, entry_points=False, plugins=modules).registry


def _config(**claim_store: object) -> MemoryConfig:
    plugins = {**MemoryConfig().plugins, "embedding_provider": PluginChoice(name="none")}
    if claim_store:
        plugins["claim_store"] = PluginChoice(name="postgres", options=dict(claim_store))
    settings = MemorySettings(prepare_turn_deadline_ms=int(SOFT_DEADLINE_S * 1000))
    return MemoryConfig(settings=settings, plugins=plugins)


def _waiting_on_locks(dsn: str) -> int:
    """Our stores' statements (application 'agent-memory') now waiting for a lock."""
    with psycopg.connect(dsn, autocommit=True) as probe:
        row = probe.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'agent-memory' "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_local_store_runs_its_calls_inline(registry: PluginRegistry, tmp_path: Path) -> None:
    """SQLite answers within its busy timeout: no thread hop (the composition root's choice)."""

    async def go() -> None:
        service = open_memory(tmp_path / "data", config=_config(), registry=registry)
        try:
            assert isinstance(service.retrieval.calls, InlineCalls)
        finally:
            await service.aclose()

    asyncio.run(go())


def test_a_locked_claims_table_never_holds_a_turn_past_its_soft_deadline(
    postgres: ThrowawayServer, registry: PluginRegistry, tmp_path: Path
) -> None:
    settings = postgres.settings()
    config = _config(dsn=settings.dsn, schema=settings.schema)

    async def go() -> None:
        service = open_memory(tmp_path / "data", config=config, registry=registry)
        try:
            assert isinstance(service.retrieval.calls, ThreadedCalls)
            await service.remember(AGENT, "The user's dentist is Dr. Okafor.", user_add=True)
            session = service.session(AGENT, "s1")
            before = await session.prepare_turn("m0", QUESTION)
            assert "Dr. Okafor" in (before.text or "")

            with psycopg.connect(settings.dsn, autocommit=True, application_name="locker") as lock:
                lock.execute("BEGIN")
                lock.execute(
                    sql.SQL("LOCK TABLE {}.agent_memory IN ACCESS EXCLUSIVE MODE").format(
                        sql.Identifier(settings.schema)
                    )
                )
                locked_at = time.monotonic()
                # Two turns: the second finds the connection free again (the first one's
                # blocked statement was cancelled), not still held by the abandoned call.
                for message in ("m1", "m2"):
                    started = time.monotonic()
                    turn = await session.prepare_turn(message, QUESTION)
                    assert time.monotonic() - started < SOFT_DEADLINE_S + MARGIN_S
                    assert turn.outcome is ContributionOutcome.FAILED_OPEN
                    assert turn.text is None
                    assert Degradation.STORE_TIMEOUT in turn.manifest.degradations
                    assert session.contribution_for(message) is None  # a retry tries again
                # The interrupt reached the server: nothing of ours still waits on the lock.
                give_up = time.monotonic() + MARGIN_S
                while _waiting_on_locks(settings.dsn) and time.monotonic() < give_up:
                    await asyncio.sleep(0.05)
                assert _waiting_on_locks(settings.dsn) == 0
                assert time.monotonic() - locked_at < LOCK_HELD_S  # all of it under the lock
                await asyncio.sleep(max(0.0, LOCK_HELD_S - (time.monotonic() - locked_at)))
                lock.execute("ROLLBACK")

            after = await session.prepare_turn("m3", QUESTION)
            assert after.outcome is ContributionOutcome.ASSEMBLED
            assert "Dr. Okafor" in (after.text or "")
            assert Degradation.STORE_TIMEOUT not in after.manifest.degradations
            # Recall through the service is back to normal on the same connection too.
            recalled = await service.recall(AGENT, "dentist Okafor")
            assert [item.claim.content for item in recalled.items] == [
                "The user's dentist is Dr. Okafor."
            ]
        finally:
            await service.aclose()

    asyncio.run(go())


def test_the_gate_interrupts_only_the_call_that_thread_is_still_making(
    settings: ConnectionSettings,
) -> None:
    """A cancel meant for an abandoned call never lands on another caller's statement: it is
    sent only while that thread holds the gate, and the connection is usable right after."""
    gate = StatementGate(cancel_timeout_s=5.0)
    conn = connect(settings)
    ended: list[str] = []

    def sleeper() -> None:
        with gate.held():
            try:
                conn.execute("SELECT pg_sleep(30)")
                ended.append("finished")
            except psycopg.errors.QueryCanceled:
                ended.append("cancelled")

    worker = threading.Thread(target=sleeper)
    try:
        worker.start()
        give_up = time.monotonic() + 10
        with psycopg.connect(settings.dsn, autocommit=True) as probe:
            while (
                time.monotonic() < give_up
                and not probe.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE state = 'active' "
                    "AND query = 'SELECT pg_sleep(30)'"
                ).fetchone()
            ):
                time.sleep(0.02)
        assert not gate.interrupt(conn, threading.get_ident())  # not the holder: no cancel
        assert worker.is_alive()
        assert worker.ident is not None and gate.interrupt(conn, worker.ident)
        worker.join(MARGIN_S)
        assert ended == ["cancelled"]
        assert not gate.interrupt(conn, worker.ident)  # it holds nothing any more
        with gate.held():
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        worker.join(35)
        conn.close()
