"""An approved suppress_topic keeps its topic out of the whole turn contribution.

Regression: the working projection was built from every agent-scope claim, so a suppressed
topic still reached the prompt through `## Working Memory` even though recall dropped it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_world import make_memory

from memory_contracts.fakes import ManualClock
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.manifest import DropReason

A = "agent-a"


def test_suppressed_topic_stays_out_of_working_memory_and_is_recorded_as_dropped(
    tmp_path: Path,
) -> None:
    """R-DIR-2: a claim matching an active suppress_topic (normalised substring) enters no
    part of the contribution, and the manifest records it as dropped: suppressed."""

    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock())
        hidden = await memory.remember(A, "The user got DIVORCED earlier this year.")
        kept = await memory.remember(A, "The user loves hiking in the Alps.")
        draft = memory.suggest_directive(
            A, DirectiveKind.SUPPRESS_TOPIC, "Do not bring up the divorce.", topic="divorce"
        )
        assert draft is not None
        session = memory.session(A, "s1")

        before = await session.prepare_turn("m1", "Plan a relaxing weekend for me.")
        assert "DIVORCED" in (before.memory_text or "")  # a draft suppresses nothing

        memory.approve_directive(A, draft.id)
        after = await session.prepare_turn("m2", "Plan a relaxing weekend for me.")

        assert "DIVORCED" not in (after.text or "")
        assert "hiking in the Alps" in (after.memory_text or "")
        dropped = {(item.id, item.reason) for item in after.manifest.dropped}
        assert (hidden.claim_id, DropReason.SUPPRESSED) in dropped
        assert kept.claim_id not in {item.id for item in after.manifest.dropped}
        await memory.aclose()

    asyncio.run(go())


def test_a_claim_recall_already_suppressed_is_recorded_once(tmp_path: Path) -> None:
    """R-DIR-2, R-READ-5: a suppressed claim that recall also found appears once in the
    manifest's drops."""

    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock())
        hidden = await memory.remember(A, "The user got divorced earlier this year.")
        memory.create_directive(
            A, DirectiveKind.SUPPRESS_TOPIC, "Do not bring up the divorce.", topic="divorce"
        )
        await memory.warm(A)
        turn = await memory.session(A, "s1").prepare_turn("m1", "How did my divorce go?")

        drops = [item for item in turn.manifest.dropped if item.id == hidden.claim_id]
        assert [item.reason for item in drops] == [DropReason.SUPPRESSED]
        assert "divorced" not in (turn.text or "")
        await memory.aclose()

    asyncio.run(go())
