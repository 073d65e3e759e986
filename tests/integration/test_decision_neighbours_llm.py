"""llm decision mode end to end: the composition root gives the decision step its neighbours
(reference §7.4, R-SCOPE-3, R-LINEAGE-1).

A memory service built by `open_memory` on the embedded stores, with a scripted text
provider: a user turn on the tape is extracted by the rules extractor, the decision step
finds the stored same-scope claim through decision-purpose retrieval, the model answers
UPDATE for it, and the merged successor replaces it — the narrower twin is never shown.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from memory_world import make_memory

from memory_adapters.tapes import InMemoryTape
from memory_contracts.fake_providers import ScriptedTextProvider
from memory_contracts.fakes import ManualClock
from memory_core.domain.scope import Scope
from memory_core.services.service import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus

A = "agent-a"
MERGED = "The user prefers concise answers with code examples in Python."


# The model's answer: the candidate is a more precise version of its first neighbour.
UPDATE_FIRST_NEIGHBOUR = json.dumps(
    {
        "decisions": [
            {"candidateIndex": 0, "decision": "UPDATE", "targetIndex": 0, "mergedContent": MERGED}
        ]
    }
)


def _memory(
    tmp_path: Path, clock: ManualClock, tape: InMemoryTape, text: ScriptedTextProvider
) -> MemoryService:
    """The embedded default (rules extractor, SQLite, DuckDB, hashing embedder) plus the
    scripted text provider, which turns the decision step's llm mode on."""
    return make_memory(tmp_path, clock, tape=tape, overrides={"text_provider": text})


def test_an_extracted_preference_updates_its_neighbour_through_the_model(
    tmp_path: Path,
) -> None:
    """§7.4, R-SCOPE-3, R-LINEAGE-1: with a text provider configured, the decision step has
    neighbours (before, llm mode had none and every candidate was a plain ADD): the model is
    shown the Agent-scope row only, and its UPDATE supersedes that row with the merged text."""
    provider = ScriptedTextProvider([UPDATE_FIRST_NEIGHBOUR])
    clock = ManualClock()

    async def go() -> None:
        tape = InMemoryTape()
        memory = _memory(tmp_path, clock, tape, provider)
        stored = await memory.remember(A, "The user prefers concise answers.")
        twin = await memory.remember(
            A, "The user prefers concise answers.", scope=Scope.session("other")
        )
        assert stored.claim_id is not None and twin.claim_id is not None
        tape.append_message("s1", "user", "I prefer concise answers with code examples.")
        tape.append_message("s1", "assistant", "Understood: short answers, with code.")
        session = memory.session(A, "s1")
        assert session.after_turn_settled(
            TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)
        )
        await session.drain()

        (request,) = provider.requests  # one decision call, for the one candidate
        shown = request.messages[1].content
        assert "The user prefers concise answers." in shown
        assert "The user prefers concise answers with code examples." in shown
        assert shown.count("The user prefers concise answers.") == 1  # not the session twin

        old = memory.store.get(A, stored.claim_id)
        assert old.superseded_by is not None
        successor = memory.store.get(A, old.superseded_by)
        assert successor.content == MERGED and successor.is_recallable
        assert successor.scope == Scope.agent()
        assert memory.store.get(A, twin.claim_id).is_recallable
        live = {c.content for c in memory.store.list_claims(A, limit=100) if c.scope.is_agent}
        assert live == {MERGED}
        await memory.aclose()

    asyncio.run(go())
