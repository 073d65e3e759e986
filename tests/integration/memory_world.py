"""A real memory service on temp files, with a manual clock, for integration tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_contracts.fakes import ManualClock
from memory_core.services.service import MemoryService
from memory_core.settings import MemorySettings
from memory_plugins import hookimpl
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry


class ManualClockPlugin:
    """Registers the test's clock as the "manual" clock plugin."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock

    @hookimpl
    def agent_memory_register_clocks(self, register: Any) -> None:
        register("manual", lambda context: self.clock, description="test clock")


def world_config(
    *, embedder: str = "hashing", plugins: dict[str, PluginChoice] | None = None, **settings: Any
) -> MemoryConfig:
    """The embedded defaults with the manual clock and a fast embedder."""
    chosen = dict(MemoryConfig().plugins)
    chosen["clock"] = PluginChoice(name="manual")
    chosen["embedding_provider"] = PluginChoice(name=embedder)
    chosen.update(plugins or {})
    return MemoryConfig(settings=MemorySettings(**settings), plugins=chosen)


def world_registry(clock: ManualClock) -> PluginRegistry:
    return load_plugins(
        strict=True, plugins=[ManualClockPlugin(clock)], distributions={"agent-memory"}
    ).registry


def make_memory(
    tmp_path: Path,
    clock: ManualClock,
    *,
    tape: object | None = None,
    embedder: str = "hashing",
    plugins: dict[str, PluginChoice] | None = None,
    **settings: Any,
) -> MemoryService:
    config = world_config(embedder=embedder, plugins=plugins, **settings)
    return open_memory(tmp_path / "data", config=config, tape=tape, registry=world_registry(clock))
