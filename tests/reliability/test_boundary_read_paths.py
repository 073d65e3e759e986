"""R-HOST-2: reads of an unknown agent create nothing. `recall` for a misspelt agent once
created a 0.5 MB DuckDB vector file; the namespace now appears with the agent's first
embedded claim, and a read before that leaves the data dir's vector files as they were."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_contracts.fakes import ManualClock
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice


def test_reads_of_an_unknown_agent_create_no_vector_file(tmp_path: Path) -> None:
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    data = tmp_path / "data"

    async def go() -> None:
        memory = open_memory(data, config=MemoryConfig(plugins=plugins), clock=ManualClock())
        try:
            await memory.remember("real", "The user likes green tea.")
            assert await memory.warm("real")
            before = _agents_with_files(data)
            assert before == {"real"}

            assert await memory.warm("misspelt") is False  # cold: nothing to serve
            result = await memory.recall("misspelt", "green tea")
            assert result.items == ()
            await memory.session("misspelt", "s1").prepare_turn(
                message_id="m1", user_text="green tea?"
            )
            await memory.diagnose(["misspelt"])
            memory.list_claims("misspelt")
            await memory.index.settle()  # the background warm a cold read requests
            assert _agents_with_files(data) == before

            # Its first claim creates the namespace as before.
            await memory.remember("misspelt", "The user likes black tea.")
            assert await memory.warm("misspelt")
            assert (data / "vectors" / "misspelt.v2.duckdb").exists()
        finally:
            await memory.aclose()

    asyncio.run(go())


def _agents_with_files(data: Path) -> set[str]:
    return {path.name.split(".")[0] for path in (data / "vectors").iterdir()}
