"""Cursors across forks, edits and subagent sessions (R-WRITE-2, R-WRITE-3)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from ingestion_support import AGENT, REPLY, Harness, RecordingExtractor, make_harness

from memory_adapters.extractors import RulesExtractor
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.tape import EntryRole
from memory_core.services.write.ingestion.service import (
    IngestionOutcome,
    SessionKind,
    TurnOutcome,
    TurnStatus,
)


@pytest.fixture
def recorder() -> RecordingExtractor:
    return RecordingExtractor(RulesExtractor())


@pytest.fixture
def harness(tmp_path: Path, recorder: RecordingExtractor) -> Iterator[Harness]:
    built = make_harness(tmp_path, extractor=recorder)
    yield built
    built.close()


def _user_texts(recorder: RecordingExtractor, index: int) -> list[str]:
    return [
        entry.content for entry in recorder.requests[index].entries if entry.role is EntryRole.USER
    ]


def test_fork_extracts_only_the_unprocessed_tail(
    harness: Harness, recorder: RecordingExtractor
) -> None:
    """R-WRITE-3: the clone's cursor maps the source's extracted prefix (a failed message
    excluded) onto the renumbered clone; the clone then extracts only the tail, once."""

    async def scenario() -> None:
        source = harness.runtime("source")
        tape = harness.tape
        tape.append_message("source", "user", "I live in Paris.")
        tape.append_message("source", "assistant", "partial answer", status="error")
        tape.append_message("source", "assistant", REPLY)
        assert (await harness.settle(source)).cursor_after == 3
        tape.append_message("source", "user", "I work at Acme.")
        tape.append_message("source", "assistant", REPLY)  # not extracted in the source

        tape.fork("source", "clone", 5)  # clones 1, 3, 4, 5 as 1..4: the failed one stays
        clone = harness.runtime("clone")
        seeded = await clone.fork(source_session_id="source", up_to_order_seq=5)
        assert seeded == 2 == harness.cursors.get(AGENT, "clone")

        report = await harness.settle(clone)
        assert report.outcome is IngestionOutcome.COMPLETED
        assert recorder.order_seqs()[-1] == [3, 4]
        assert _user_texts(recorder, -1) == ["I work at Acme."]
        assert harness.cursors.get(AGENT, "clone") == 4
        contents = [claim.content for claim in harness.claims()]
        assert sorted(contents) == ["The user lives in Paris.", "The user works at Acme."]

        # Later turns of the clone never replay the processed prefix.
        await harness.turn(clone, "I prefer tea over coffee.")
        assert recorder.order_seqs()[-1] == [5, 6]

    asyncio.run(scenario())


def test_fork_seeding_fences_older_work_of_the_clone(harness: Harness) -> None:
    """R-WRITE-3: seeding bumps the clone's epoch, so a pass admitted before it is stale."""

    async def scenario() -> None:
        harness.tape.append_message("source", "user", "I live in Paris.")
        harness.tape.append_message("source", "assistant", REPLY)
        harness.tape.fork("source", "clone", 2)
        clone = harness.runtime("clone")
        before = harness.coordinator.epochs.current("clone")
        await clone.fork(source_session_id="source", up_to_order_seq=2)
        assert harness.coordinator.epochs.current("clone") == before + 1

    asyncio.run(scenario())


def test_edit_at_order_seq_n_re_extracts_from_n(
    harness: Harness, recorder: RecordingExtractor
) -> None:
    """R-WRITE-3: invalidate_from(N) rewinds the cursor to N-1; the next pass extracts from
    N with the edited text, and the slot supersedes the superseded version."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        await harness.turn(runtime, "I live in Paris.")
        await harness.turn(runtime, "I work at Acme.")
        assert harness.cursors.get(AGENT, "s1") == 4
        acme = harness.live("The user works at Acme.")

        entries = await harness.tape.get_by_session(
            "s1", deadline=Deadline.after(harness.clock, 60), cancel=CancellationToken()
        )
        harness.tape.replace("s1", entries[2].id, "I work at Globex.")
        assert runtime.invalidate_from(3) == 2 == harness.cursors.get(AGENT, "s1")

        report = await harness.settle(runtime)
        assert report.outcome is IngestionOutcome.COMPLETED
        assert recorder.order_seqs()[-1] == [3, 4]
        assert _user_texts(recorder, -1) == ["I work at Globex."]
        globex = harness.live("The user works at Globex.")
        assert harness.store.get("agent-1", acme.id).superseded_by == globex.id
        assert harness.cursors.get(AGENT, "s1") == 4

    asyncio.run(scenario())


def test_transcript_clear_rewinds_to_zero(harness: Harness) -> None:
    """R-WRITE-3: a cleared transcript starts the cursor over (and fences old work)."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        await harness.turn(runtime, "I live in Paris.")
        epoch = harness.coordinator.epochs.current("s1")
        runtime.clear_transcript()
        assert harness.cursors.get(AGENT, "s1") == 0
        assert harness.coordinator.epochs.current("s1") == epoch + 1

    asyncio.run(scenario())


def test_subagent_session_produces_no_claims(
    harness: Harness, recorder: RecordingExtractor
) -> None:
    """R-WRITE-2: a subagent's "user" turns are the parent's instructions: never extracted."""

    async def scenario() -> None:
        runtime = harness.runtime("child", kind=SessionKind.SUBAGENT)
        harness.say("child", "I live in Paris. I work at Acme. I prefer tea over coffee.")
        handle = runtime.after_turn_settled(
            TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)
        )
        assert handle is None
        assert runtime.last_report is not None
        assert runtime.last_report.outcome is IngestionOutcome.SUBAGENT
        assert harness.scheduler.pending == 0  # nothing was scheduled
        assert recorder.requests == []
        assert harness.claims() == [] and harness.cursors.get(AGENT, "child") == 0

    asyncio.run(scenario())


def test_below_threshold_turns_wait_for_more_conversation(tmp_path: Path) -> None:
    """§7.1: fallback admission needs tool use, ≥6 messages, or ≥2 with ≥160 characters;
    short turns accumulate until the range qualifies."""

    async def scenario(harness: Harness) -> None:
        runtime = harness.runtime("s1")
        report = await harness.turn(runtime, "I live in Paris.", "Noted.")
        assert report.outcome is IngestionOutcome.BELOW_THRESHOLD
        assert harness.cursors.get(AGENT, "s1") == 0 and harness.claims() == []
        assert (await harness.turn(runtime, "Hi.", "Hello.", had_tool_use=True)).outcome is (
            IngestionOutcome.COMPLETED
        )
        assert harness.cursors.get(AGENT, "s1") == 4
        assert harness.live("The user lives in Paris.").source.first_order_seq == 1
        for _ in range(3):
            report = await harness.turn(runtime, "ok", "ok")
        assert report.outcome is IngestionOutcome.COMPLETED  # 6 messages since the cursor
        assert harness.cursors.get(AGENT, "s1") == 10

    harness = make_harness(tmp_path)
    try:
        asyncio.run(scenario(harness))
    finally:
        harness.close()
