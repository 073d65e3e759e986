"""No "Task exception was never retrieved" (issue 11): a local-model embedding that outlives
its deadline is terminated in its thread and fails there, after the caller has gone; that
failure must be retrieved, or asyncio prints a traceback when the task is collected — the
stray tracebacks `agent-memory reindex` and a close printed (R-HOST-2: one line, not a
traceback). The loop's exception handler records every such report here."""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

import pytest

from memory_adapters.local_embedder.minilm import MiniLMEmbedder
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded
from memory_core.ports.providers import EmbeddingPurpose


def test_an_embedding_terminated_past_its_deadline_leaves_no_unretrieved_exception() -> None:
    """R-HOST-2: the abandoned model call's own error is retrieved, never reported."""

    async def go() -> list[dict[str, Any]]:
        reports: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(
            lambda _loop, context: reports.append(context)
        )
        embedder = MiniLMEmbedder(threads=1, batch_size=8)
        # Loaded first, so the deadline below cuts the inference and not the model load.
        await embedder.embed(
            ["warm"],
            purpose=EmbeddingPurpose.BATCH,
            deadline=Deadline.after(time, 120),
            cancel=CancellationToken(),
        )
        texts = [f"a long sentence about tea and kayaks, number {i}, " * 20 for i in range(48)]
        with pytest.raises(DeadlineExceeded):
            await embedder.embed(
                texts,
                purpose=EmbeddingPurpose.BATCH,
                deadline=Deadline.after(time, 0.05),
                cancel=CancellationToken(),
            )
        # The terminated run ends in its thread soon after; once its task is done (or after
        # 10 s, when the assertion below says what was reported), the task is collected.
        current = asyncio.current_task()
        for _ in range(200):
            if not [task for task in asyncio.all_tasks() if task is not current]:
                break
            await asyncio.sleep(0.05)
        for _ in range(3):
            gc.collect()
            await asyncio.sleep(0)
        return reports

    reports = asyncio.run(go())
    assert [report.get("message") for report in reports] == []
