"""The host's shutdown order with a real database operation in the middle (R-HOST-1,
R-MAINT-2): stop new work → fence → drain (`quiesce`) → close → SQLite backup and VACUUM →
reopen → resume, while ingestion and a maintenance pass stalled in a provider call are in
flight. Nothing committed is lost, nothing in flight is half-written, and after resuming
the sessions extract what was left."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from memory_world import make_memory

from memory_adapters.tapes import InMemoryTape
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import TextRequest
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus

A = "agent-a"
CITIES = ("Lisbon", "Porto", "Madrid", "Seville", "Valencia", "Bilbao")
SETTLED = TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)


class _StalledText:
    """Every completion hangs until cancelled: the maintenance pass is in flight."""

    provider_id = "stalled"
    model_id = "stalled-v1"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        self.calls += 1
        await asyncio.sleep(3_600)
        return '{"same": false}'

    async def aclose(self) -> None:
        return None


def _count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM agent_memory").fetchone()[0])


def test_backup_and_vacuum_between_quiesce_and_resume_lose_nothing(tmp_path: Path) -> None:
    clock = ManualClock()
    tape = InMemoryTape()
    stalled = _StalledText()
    settings = {"merge_similarity_threshold": 0.1}

    async def go() -> None:
        memory = make_memory(
            tmp_path, clock, tape=tape, overrides={"text_provider": stalled}, **settings
        )
        await memory.remember(A, "The user's cat is called Miso.")
        await memory.remember(A, "The user's dog is called Rex.")
        memory.start_maintenance()
        passing = asyncio.ensure_future(memory.run_maintenance(A, heavy=True))
        for _ in range(500):
            if stalled.calls:
                break
            await asyncio.sleep(0.01)
        assert stalled.calls, "the maintenance pass never reached the provider"
        for n, city in enumerate(CITIES):
            session = f"s{n}"
            tape.append_message(session, "user", f"I moved to {city} last year.")
            tape.append_message(session, "assistant", f"{city} is lovely.")
            memory.session(A, session).after_turn_settled(SETTLED)  # extraction in flight

        await memory.quiesce(timeout=5.0)  # stop new work, fence, drain
        report = await passing
        assert report.stopped and report.merged == 0
        before = {c.id: c for c in memory.store.list_claims(A, include_inactive=True, limit=500)}
        await memory.aclose()

        database = tmp_path / "data" / "memory.sqlite3"
        backup = tmp_path / "backup.sqlite3"
        with sqlite3.connect(database) as source, sqlite3.connect(backup) as target:
            source.backup(target)
        with sqlite3.connect(database) as conn:
            conn.execute("VACUUM")
        assert _count(backup) == _count(database)

        reopened = make_memory(tmp_path, clock, tape=tape, **settings)
        try:
            reopened.resume()
            after = {
                c.id: c for c in reopened.store.list_claims(A, include_inactive=True, limit=500)
            }
            assert after == before  # the operation changed nothing committed
            for n in range(len(CITIES)):  # the sessions resume: what was left is extracted
                session = reopened.session(A, f"s{n}")
                session.after_turn_settled(SETTLED)
                await session.drain()
            # Each move supersedes the last (a home is single-valued): count them all.
            every = reopened.list_claims(A, include_inactive=True, limit=500)
            contents = {c.content for c in every}
            assert {f"The user lives in {city}." for city in CITIES} <= contents
            assert {"The user's cat is called Miso.", "The user's dog is called Rex."} <= contents
            assert reopened.maintenance_status().running
        finally:
            await reopened.aclose()

    asyncio.run(go())
