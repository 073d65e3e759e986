"""A real memory service on temp files for the forgetting/trust-plane reliability tests."""

from __future__ import annotations

from pathlib import Path

from memory_contracts.fakes import ManualClock
from memory_core.services.memory import MemoryService
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins


def open_world(data_dir: Path, clock: ManualClock | None = None) -> MemoryService:
    """`open_memory` with the first-party plugins, the hashing embedder and a manual clock."""
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    return open_memory(
        data_dir,
        config=MemoryConfig(settings=MemorySettings(), plugins=plugins),
        clock=clock or ManualClock(),
        registry=load_plugins(strict=True, distributions={"agent-memory"}).registry,
    )
