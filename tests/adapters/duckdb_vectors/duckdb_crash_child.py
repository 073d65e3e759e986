"""Child process for the crash tests: runs one store operation and SIGKILLs itself at a step.

    python duckdb_crash_child.py ROOT OP STOP_AT

OP is `publish` (first upsert of a new agent), `rebuild` (replace with identity NEW),
`migrate` (warm-up that migrates a v1 file), `write` (an upsert, then die before close),
`scrub` (delete `old-1`, then close: the close rewrites the file) or
`reidentify` (the memory service warms ROOT as a data directory whose claims were embedded by
another model: the namespace is rebuilt and the claims reset).
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
from memory_adapters.duckdb_vectors.publish import StepHook
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

    if op == "reidentify":
        reidentify(Path(root), on_step)
        print("completed")
        return
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
        elif op == "scrub":
            await store.delete(AGENT, ["old-1"], **calls)
            on_step("deleted")
        elif op == "write":
            await store.upsert(AGENT, OLD, {"late": [0, 0, 0, 1]}, **calls)
            on_step("written")
        await store.aclose()

    asyncio.run(run())
    print("completed")


def reidentify(data_dir: Path, on_step: StepHook) -> None:
    from memory_plugins.bootstrap import open_memory
    from memory_plugins.builtin.vector_stores import VECTOR_DIRECTORY

    vectors = DuckDBVectorStore(data_dir / VECTOR_DIRECTORY, MonotonicClock(), on_step=on_step)
    memory = open_memory(
        data_dir, config=data_dir / "new.toml", overrides={"vector_store": vectors}
    )

    async def run() -> None:
        await memory.warm(AGENT)
        await memory.aclose()

    asyncio.run(run())


if __name__ == "__main__":
    main(*sys.argv[1:4])
