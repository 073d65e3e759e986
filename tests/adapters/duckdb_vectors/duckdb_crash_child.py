"""Child process for the crash tests: runs one store operation and SIGKILLs itself at a step.

    python duckdb_crash_child.py ROOT OP STOP_AT

OP is `publish` (first upsert of a new agent), `rebuild` (replace with identity NEW),
`migrate` (warm-up that migrates a v1 file) or `write` (an upsert, then die before close).
Exits 0 with "completed" if the step was never reached.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from memory_adapters.clocks import MonotonicClock
from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity

OLD = EmbeddingIdentity(provider="crash", model="old", dim=4)
NEW = EmbeddingIdentity(provider="crash", model="new", dim=4)
AGENT = "agent-x"
LEGACY_IDS = [f"legacy-{i:03d}" for i in range(35)]


def main(root: str, op: str, stop_at: str) -> None:
    def on_step(step: str) -> None:
        if step == stop_at:
            os.kill(os.getpid(), signal.SIGKILL)

    clock = MonotonicClock()
    store = DuckDBVectorStore(Path(root), clock, on_step=on_step, migration_page_rows=10)

    async def run() -> None:
        calls = {"deadline": Deadline.after(clock, 60), "cancel": CancellationToken()}
        if op == "publish":
            await store.upsert(AGENT, OLD, {"fresh": [1, 0, 0, 0]}, **calls)
        elif op == "rebuild":
            await store.rebuild(AGENT, NEW, **calls)
        elif op == "migrate":
            await store.warm(AGENT, OLD, LEGACY_IDS, config_generation=1, **calls)
        elif op == "write":
            await store.upsert(AGENT, OLD, {"late": [0, 0, 0, 1]}, **calls)
            on_step("written")
        await store.aclose()

    asyncio.run(run())
    print("completed")


if __name__ == "__main__":
    main(*sys.argv[1:4])
