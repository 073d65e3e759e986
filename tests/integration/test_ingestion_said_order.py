"""Supersession follows the order in which things were said (R-TIME-1, R-LINEAGE-1): a
correction in the same extraction chunk as the fact it corrects retires it, as one a chunk
later does, and a backdated import is ordered by its messages, never by the moment the
holder happened to be written."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from memory_world import make_memory

from memory_adapters.tapes import JsonlTape
from memory_contracts.fakes import ManualClock
from memory_core.domain.temporal_policy import assess
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus

A = "agent-a"
SETTLED = TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)
START = datetime(2026, 3, 1, tzinfo=UTC)


class TickingClock(ManualClock):
    """Time passes between reads, as on a real machine: a clock read before extraction is
    earlier than the `created_at` of a row written after it. (`ManualClock` alone hid the
    bug this file guards against.)"""

    def now(self) -> datetime:
        self.advance(0.001)
        return super().now()


BERLIN_MUNICH = (
    ("user", "I live in Berlin."),
    ("assistant", "Berlin is a great city."),
    ("user", "I work at Acme as a designer, by the way."),
    ("assistant", "Good to know."),
    ("user", "Actually, I live in Munich."),
    ("assistant", "Noted, Munich it is."),
)
TOKYO = (
    ("user", "I'm flying to Tokyo next month."),
    ("assistant", "Exciting!"),
    ("user", "Not much else is new."),
    ("assistant", "Alright."),
    ("user", "I cancelled my trip to Tokyo."),
    ("assistant", "Sorry to hear that."),
)


async def _ingest(memory, session: str) -> None:  # type: ignore[no-untyped-def]
    runtime = memory.session(A, session)
    assert runtime.after_turn_settled(SETTLED)
    await runtime.drain()


def _append(tape: JsonlTape, session: str, lines: Sequence[tuple[str, str]], **kw) -> None:  # type: ignore[no-untyped-def]
    for role, text in lines:
        tape.append_message(session, role, text, **kw)


def _homes(memory) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    slot = [
        c for c in memory.store.list_claims(A, include_inactive=True) if c.slot == "user.home_city"
    ]
    return (
        [c.content for c in slot if c.is_recallable],
        [c.content for c in slot if not c.is_recallable],
    )


@pytest.mark.parametrize("chunks", [1, 2], ids=["one-chunk", "two-chunks"])
def test_a_correction_retires_the_fact_it_corrects(tmp_path: Path, chunks: int) -> None:
    """The six-message Berlin -> Munich tape: Munich current, Berlin superseded, and recall
    answers Munich only — whether both share a chunk or the correction comes a chunk later."""
    clock = TickingClock(now=START)

    async def go() -> None:
        with JsonlTape(tmp_path / "tape.jsonl") as tape:
            memory = make_memory(tmp_path, clock, tape=tape)
            if chunks == 1:
                _append(tape, "s", BERLIN_MUNICH)
                await _ingest(memory, "s")
            else:
                _append(tape, "s", BERLIN_MUNICH[:4])
                await _ingest(memory, "s")
                _append(tape, "s", BERLIN_MUNICH[4:])
                await _ingest(memory, "s")
            live, retired = _homes(memory)
            assert live == ["The user lives in Munich."]
            assert retired == ["The user lives in Berlin."]
            found = [i.claim.content for i in (await memory.recall(A, "where do I live")).items]
            assert "The user lives in Munich." in found
            assert "The user lives in Berlin." not in found
            await memory.aclose()

    asyncio.run(go())


def test_a_plan_cancelled_in_the_same_chunk_reads_previously_planned(tmp_path: Path) -> None:
    """R-TIME-2: the open plan is superseded in its slot by the cancelled one."""
    clock = TickingClock(now=START)

    async def go() -> None:
        with JsonlTape(tmp_path / "tape.jsonl") as tape:
            memory = make_memory(tmp_path, clock, tape=tape)
            _append(tape, "s", TOKYO)
            await _ingest(memory, "s")
            trip = [
                c
                for c in memory.store.list_claims(A, include_inactive=True)
                if c.slot == "user.trip.tokyo"
            ]
            (live,) = [c for c in trip if c.is_recallable]
            (planned,) = [c for c in trip if not c.is_recallable]
            assert planned.superseded_by == live.id
            assert assess(live.temporal, clock.now()).label == "previously planned"
            await memory.aclose()

    asyncio.run(go())


def test_a_backdated_import_is_ordered_by_its_messages(tmp_path: Path) -> None:
    """Both messages dated 2025, written in 2026: the holder's write time is later than
    either, yet the later-said Munich retires Berlin."""
    clock = TickingClock(now=START)
    said = datetime(2025, 5, 1, tzinfo=UTC)

    async def go() -> None:
        with JsonlTape(tmp_path / "tape.jsonl") as tape:
            memory = make_memory(tmp_path, clock, tape=tape)
            for n, (role, text) in enumerate(BERLIN_MUNICH):
                tape.append_message("old", role, text, created_at=said + timedelta(minutes=n))
            await _ingest(memory, "old")
            assert _homes(memory) == (["The user lives in Munich."], ["The user lives in Berlin."])
            await memory.aclose()

    asyncio.run(go())


def test_a_restated_old_value_said_last_wins(tmp_path: Path) -> None:
    """Berlin, Munich, Berlin again in one chunk: the repeat is the last word."""
    clock = TickingClock(now=START)
    lines = (*BERLIN_MUNICH[:5], ("user", "Sorry, I still live in Berlin."))

    async def go() -> None:
        with JsonlTape(tmp_path / "tape.jsonl") as tape:
            memory = make_memory(tmp_path, clock, tape=tape)
            _append(tape, "s", lines)
            await _ingest(memory, "s")
            live, retired = _homes(memory)
            assert live == ["The user lives in Berlin."]
            assert retired == ["The user lives in Munich."]
            await memory.aclose()

    asyncio.run(go())
