"""The host API: `open_memory_async` and `SyncMemory` for hosts without an event loop.

R-HOST-1 (a runtime per session over one service; the host owns shutdown: drain, close),
R-READ-7 (placement), R-WRITE-1 (extraction in the background of a settled turn).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memory_core.services.read.runtime import ContributionOutcome
from memory_plugins.api import (
    SyncMemory,
    TurnOutcome,
    TurnStatus,
    open_memory_async,
    place,
)
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.context import FactoryContext
from memory_plugins.loader import load_plugins

AGENT = "assistant"
REPLY = (
    "Thanks for telling me, I will keep that in mind. Is there anything else I can help you "
    "with today, for example planning, writing, or questions about one of your projects?"
)


def hashing_config() -> MemoryConfig:
    plugins = {**MemoryConfig().plugins, "embedding_provider": PluginChoice(name="hashing")}
    return MemoryConfig(plugins=plugins)


@pytest.fixture
def tape(tmp_path: Path) -> object:
    registry = load_plugins().registry
    return registry.create_tape("memory", FactoryContext(data_dir=tmp_path))


def test_a_sync_host_remembers_recalls_and_forgets(tmp_path: Path) -> None:
    """R-HOST-1: plain calls, no asyncio in sight; results are the service's values."""
    with SyncMemory(tmp_path / "data", config=hashing_config()) as memory:
        stored = memory.remember(AGENT, "The user prefers metric units.")
        assert stored.claim_id is not None
        assert memory.warm(AGENT)
        found = memory.recall(AGENT, "metric units")
        assert [item.claim.id for item in found.items] == [stored.claim_id]
        forgotten = memory.forget(AGENT, stored.claim_id)
        assert forgotten.archived
        assert memory.recall(AGENT, "metric units").items == ()
        restored = memory.restore(AGENT, stored.claim_id)
        assert restored.lifecycle.value == "active"


def test_a_sync_host_runs_turns_and_background_ingestion(tmp_path: Path, tape) -> None:  # type: ignore[no-untyped-def]
    """R-HOST-1, R-WRITE-1, R-READ-7: prepare a turn, place it, append the reply, settle;
    the extraction runs on the private loop and the next turn sees its result."""
    with SyncMemory(tmp_path / "data", config=hashing_config(), tape=tape) as memory:
        first = memory.prepare_turn(AGENT, "chat", "m1", "I live in Lisbon.")
        assert first.outcome is ContributionOutcome.EMPTY
        tape.append_message("chat", "user", "I live in Lisbon.", message_id="m1")
        tape.append_message("chat", "assistant", REPLY)
        assert memory.after_turn_settled(AGENT, "chat", TurnOutcome(status=TurnStatus.COMPLETED))
        memory.drain(AGENT, "chat")

        second = memory.prepare_turn(AGENT, "chat", "m3", "Where do I live?")

        assert second.outcome is ContributionOutcome.ASSEMBLED
        assert "The user lives in Lisbon." in (second.memory_text or "")
        assert place(second, "Where do I live?").endswith("\n\nWhere do I live?")
        again = memory.prepare_turn(AGENT, "chat", "m3", "Where do I live?")
        assert again.outcome is ContributionOutcome.REUSED


def test_tool_calls_through_a_sync_memory(tmp_path: Path) -> None:
    with SyncMemory(tmp_path / "data", config=hashing_config()) as memory:
        result = memory.handle_tool_call(
            AGENT, "chat", "memory_remember", '{"content": "The user likes jazz."}'
        )
        assert result["status"] == "stored"


def test_close_is_idempotent_and_a_closed_memory_refuses_calls(tmp_path: Path) -> None:
    memory = SyncMemory(tmp_path / "data", config=hashing_config())
    memory.close()
    memory.close()

    with pytest.raises(RuntimeError, match="closed"):
        memory.recall(AGENT, "anything")


def test_calling_it_from_its_own_loop_raises_instead_of_deadlocking(tmp_path: Path) -> None:
    with SyncMemory(tmp_path / "data", config=hashing_config()) as memory:

        async def reentrant(service: object) -> None:
            memory.recall(AGENT, "anything")

        with pytest.raises(RuntimeError, match="own event loop"):
            memory.run(reentrant)


def test_its_loop_thread_ends_on_close(tmp_path: Path) -> None:
    before = {t.name for t in threading.enumerate()}
    SyncMemory(tmp_path / "data", config=hashing_config()).close()

    assert "agent-memory-loop" not in {t.name for t in threading.enumerate()} - before


def test_a_failing_open_stops_the_loop_and_raises(tmp_path: Path) -> None:
    """A bad configuration surfaces as the library's error, with no thread left behind."""
    from memory_plugins.errors import PluginNotFound

    plugins = {**MemoryConfig().plugins, "claim_store": PluginChoice(name="no-such-store")}
    before = threading.active_count()

    with pytest.raises(PluginNotFound):
        SyncMemory(tmp_path / "data", config=MemoryConfig(plugins=plugins))

    assert threading.active_count() == before


def test_open_memory_async_serves_an_async_host(tmp_path: Path) -> None:
    async def go() -> str | None:
        memory = await open_memory_async(tmp_path / "data", config=hashing_config())
        try:
            stored = await memory.remember(AGENT, "The user's cat is called Miso.")
            return stored.claim_id
        finally:
            await memory.aclose()

    assert asyncio.run(go()) is not None


def test_importing_the_package_does_not_load_the_composition_root() -> None:
    """Plugins import `memory_plugins` for `hookimpl`: the host API loads on first use."""
    code = (
        "import sys, memory_plugins\n"
        "assert 'memory_plugins.api' not in sys.modules\n"
        "assert 'memory_plugins.bootstrap' not in sys.modules\n"
        "from memory_plugins import SyncMemory, handle_tool_call, open_memory\n"
        "assert SyncMemory.__module__ == 'memory_plugins.api'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
