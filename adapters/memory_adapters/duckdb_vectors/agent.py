"""What one store object keeps per agent across its namespace's opens and closes: the lock,
the generation, health, the parked certificate, and the connection a native call uses (so
the guard can interrupt it)."""

from __future__ import annotations

import asyncio

import duckdb

from memory_core.ports.vectors import ReadyCertificate

from .agent_store import AgentStore

__all__ = ["Agent", "Connection"]


class Connection:
    """The connection a worker is using right now, so the guard can interrupt it."""

    def __init__(self) -> None:
        self.current: duckdb.DuckDBPyConnection | None = None

    def bind(self, conn: duckdb.DuckDBPyConnection | None) -> None:
        self.current = conn

    def interrupt(self) -> None:
        conn = self.current
        if conn is not None:
            conn.interrupt()


class Agent:
    """What outlives an agent's open/close: its lock, generation and health."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.lock = asyncio.Lock()  # serialises opening, writes, rebuilds and drops
        self.store: AgentStore | None = None
        self.generation = 0
        self.quarantined = False
        self.suspect = False
        self.connection = Connection()
        # The certificate an eviction closed; cleared by anything else that moves the
        # generation (rebuild, drop, quarantine, a plain close) or by a fresh warm-up.
        self.parked: ReadyCertificate | None = None

    def next_generation(self) -> int:
        self.generation += 1
        return self.generation
