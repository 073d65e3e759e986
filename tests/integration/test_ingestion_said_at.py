"""Ingestion dates a chunk by when its messages were said, not by when it runs (R-TIME-1):
an imported conversation resolves relative dates against its own day, and older evidence
never retires the state that followed it."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from memory_world import make_memory

from memory_adapters.tapes import JsonlTape
from memory_contracts.fakes import ManualClock
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus

A = "agent-a"
SETTLED = TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)


def _import(path: Path, session: str, said: str) -> None:
    """A conversation exported elsewhere, its lines carrying when each message was said."""
    lines = [
        {"id": f"{session}-1", "session": session, "order_seq": 1, "role": "user",
         "content": "I moved to Lisbon last year.", "created_at": said},
        {"id": f"{session}-2", "session": session, "order_seq": 2, "role": "assistant",
         "content": "Lisbon is lovely.", "created_at": said},
    ]  # fmt: skip
    with path.open("a", encoding="utf-8") as file:
        file.writelines(json.dumps(line) + "\n" for line in lines)


async def _ingest(memory, session: str) -> None:  # type: ignore[no-untyped-def]
    runtime = memory.session(A, session)
    assert runtime.after_turn_settled(SETTLED)
    await runtime.drain()


def test_an_imported_conversation_resolves_relative_dates_against_when_it_was_said(
    tmp_path: Path,
) -> None:
    """Said in June 2025, ingested in 2026: "last year" is 2024, not 2025."""
    clock = ManualClock(now=datetime(2026, 3, 1, tzinfo=UTC))
    path = tmp_path / "import.jsonl"
    _import(path, "s1", "2025-06-01T12:00:00+00:00")

    async def go() -> None:
        with JsonlTape(path) as tape:
            memory = make_memory(tmp_path, clock, tape=tape)
            await _ingest(memory, "s1")
            (claim,) = memory.store.list_claims(A)
            assert claim.content == "The user lives in Lisbon."
            assert claim.temporal.interval.valid_from == datetime(2024, 1, 1, tzinfo=UTC)
            assert claim.created_at == clock.now()  # written now, dated by when it was said
            await memory.aclose()

    asyncio.run(go())


def test_a_created_at_ahead_of_the_domain_clock_is_clamped_to_now(tmp_path: Path) -> None:
    """A host clock running ahead never dates a chunk in the future."""
    clock = ManualClock(now=datetime(2026, 3, 1, tzinfo=UTC))
    path = tmp_path / "import.jsonl"
    _import(path, "s1", "2031-01-01T00:00:00+00:00")

    async def go() -> None:
        with JsonlTape(path) as tape:
            memory = make_memory(tmp_path, clock, tape=tape)
            await _ingest(memory, "s1")
            (claim,) = memory.store.list_claims(A)
            assert claim.temporal.interval.valid_from == datetime(2025, 1, 1, tzinfo=UTC)
            await memory.aclose()

    asyncio.run(go())


def test_a_backdated_import_never_retires_a_newer_state(tmp_path: Path) -> None:
    """R-TIME-1: "lives in Berlin", learned now, survives an undated statement imported from
    2025: when it was said, not when it was imported, decides which state is newer."""
    clock = ManualClock(now=datetime(2026, 3, 1, tzinfo=UTC))
    path = tmp_path / "tape.jsonl"

    async def go() -> None:
        with JsonlTape(path) as tape:
            memory = make_memory(tmp_path, clock, tape=tape)
            tape.append_message("live", "user", "I live in Berlin.")
            tape.append_message("live", "assistant", "Welcome to Berlin!")
            await _ingest(memory, "live")
            clock.advance(60.0)
            tape.append_message(
                "old", "user", "I live in Lisbon.",
                created_at=datetime(2025, 6, 1, 12, tzinfo=UTC),
            )  # fmt: skip
            await _ingest(memory, "old")
            contents = [claim.content for claim in memory.store.list_claims(A)]
            assert contents == ["The user lives in Berlin."]
            await memory.aclose()

    asyncio.run(go())
