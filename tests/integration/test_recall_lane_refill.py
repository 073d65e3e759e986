"""The recall lane refills past memories working memory already shows (issue 14, R-READ-5).

Regression: with many similar memos, recall's top-K were the newest ones — exactly those the
working projection shows — so all of them were dropped as `duplicate` and the recall lane
stayed empty with most of the budget unused.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_world import make_memory

from memory_contracts.fakes import ManualClock
from memory_core.domain.manifest import DropReason

A = "agent-a"


def test_recall_replaces_working_duplicates_with_the_next_ranked_memories(tmp_path: Path) -> None:
    """R-READ-5: a recalled memory already in working memory is dropped as `duplicate`,
    and its place goes to the next-ranked memory not shown there."""

    async def go() -> None:
        clock = ManualClock()
        memory = make_memory(tmp_path, clock)
        for n in range(40):
            await memory.remember(
                A, f"Falcon release checklist item {n}: the step owned by team {n} is done."
            )
            # Days apart: recency, not the numbers in the text, orders these alike memos, so
            # recall's first picks are the newest — the ones working memory shows.
            clock.advance(2 * 86_400)
        await memory.warm(A)
        turn = await memory.session(A, "s1").prepare_turn(
            "m1", "What is left on the Falcon release checklist?", budget_tokens=8_000
        )

        duplicates = {i.id for i in turn.manifest.dropped if i.reason is DropReason.DUPLICATE}
        selected = [item.id for item in turn.manifest.selected]
        assert duplicates, "the newest memos are in working memory and recalled first"
        assert len(selected) == memory.settings.top_k
        assert duplicates.isdisjoint(selected)
        await memory.aclose()

    asyncio.run(go())
