"""The README's host, run for two turns, gets hybrid recall on the second without ever
calling `warm()` (R-HOST-1, R-VEC-4): the warm-up starts by itself in the background and
`vectorCold` is only the degradation reported until it is done.

The default configuration throughout: the local embedder and DuckDB vectors."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from memory_core.domain.manifest import CandidateSource, Degradation
from memory_core.services.memory import MemoryService
from memory_core.services.read.runtime import MemoryRuntime, TurnContribution
from memory_plugins.api import (
    EntryRole,
    InMemoryTape,
    TurnOutcome,
    TurnStatus,
    open_memory_async,
    place,
)
from memory_plugins.tools import handle_tool_call

A = "assistant"
REPLY = (
    "Thanks for telling me, I will keep that in mind. Is there anything else I can help you "
    "with today, for example planning, writing, or questions about one of your projects?"
)
SECOND = "Where do I live?"

# What the host does between its first turn and the user's next message.
Between = Callable[[MemoryService, MemoryRuntime], Awaitable[None]]


async def _two_turns(data: Path, first: str, between: Between, **ids: str) -> TurnContribution:
    """The README host's turn twice; returns the second turn's contribution."""
    tape = InMemoryTape()
    memory = await open_memory_async(data, tape=tape)
    try:
        runtime = memory.session(A, "chat-1", **ids)
        user = tape.append_message("chat-1", EntryRole.USER, first)
        turn = await runtime.prepare_turn(user.id, first)
        assert place(turn, first) == first  # nothing remembered yet
        tape.append_message("chat-1", EntryRole.ASSISTANT, REPLY)
        await between(memory, runtime)
        runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        await runtime.drain()  # the user takes a moment to type the next message
        user = tape.append_message("chat-1", EntryRole.USER, SECOND)
        return await runtime.prepare_turn(user.id, SECOND)
    finally:
        await memory.aclose()


def _vectors_ran(turn: TurnContribution) -> None:
    assert turn.retrieval is not None
    assert Degradation.VECTOR_COLD not in turn.retrieval.degradations
    assert turn.retrieval.fts_candidates >= 1 and turn.retrieval.vector_candidates >= 1
    assert turn.manifest.degradations == ()
    assert turn.manifest.timings.query_embedding > 0 and turn.manifest.timings.vector > 0


def test_a_fact_extracted_on_the_first_turn_is_a_hybrid_candidate_on_the_second(
    tmp_path: Path,
) -> None:
    """R-VEC-4: the fact extracted after turn one is embedded and certified by the same
    background pass, so turn two's retrieval ran both sources (the fact itself is shown in
    working memory, which takes a young agent's few Agent-scope facts first)."""

    async def nothing(memory: MemoryService, runtime: MemoryRuntime) -> None:
        return None

    turn = asyncio.run(_two_turns(tmp_path / "data", "I live in Lisbon these days.", nothing))

    assert "Lisbon" in (turn.memory_text or "")
    _vectors_ran(turn)


def test_a_fact_the_model_saved_for_its_user_is_selected_from_both_sources(
    tmp_path: Path,
) -> None:
    """R-VEC-4, R-SCOPE-1: a multi-user host; on turn one the model saves the fact with
    `memory_remember` (the user's scope); turn two's manifest selects it from FTS and the
    vector source together."""

    async def model_saves(memory: MemoryService, runtime: MemoryRuntime) -> None:
        saved = await handle_tool_call(
            memory,
            A,
            "chat-1",
            "memory_remember",
            {"content": "The user lives in Lisbon."},
            user_id="u1",
        )
        assert saved["ok"], saved
        # The save's embedding runs in the background while the user reads the reply; a
        # user takes seconds, the test waits for exactly that (never calling warm()).
        async with asyncio.timeout(60):
            while memory.pending_embeddings(A) or memory.index.certificate(A) is None:
                await asyncio.sleep(0.05)

    turn = asyncio.run(
        _two_turns(tmp_path / "data", "Remember that I moved.", model_saves, user_id="u1")
    )

    assert "The user lives in Lisbon." in (turn.memory_text or "")
    (selected,) = turn.manifest.selected
    assert set(selected.sources) == {CandidateSource.FTS, CandidateSource.VECTOR}
    _vectors_ran(turn)
