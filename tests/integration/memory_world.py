"""A real memory service on temp files, with a manual clock, for integration tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_contracts.fakes import ManualClock
from memory_core.services.service import MemoryService
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import PortOverrides, open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry


def world_config(
    *, embedder: str = "hashing", plugins: dict[str, PluginChoice] | None = None, **settings: Any
) -> MemoryConfig:
    """The embedded defaults with a fast embedder."""
    chosen = dict(MemoryConfig().plugins)
    chosen["embedding_provider"] = PluginChoice(name=embedder)
    chosen.update(plugins or {})
    return MemoryConfig(settings=MemorySettings(**settings), plugins=chosen)


def world_registry() -> PluginRegistry:
    """The first-party plugins only: an installed third-party plugin cannot change a test."""
    return load_plugins(strict=True, distributions={"agent-memory"}).registry


def make_memory(
    tmp_path: Path,
    clock: ManualClock,
    *,
    tape: object | None = None,
    embedder: str = "hashing",
    plugins: dict[str, PluginChoice] | None = None,
    overrides: PortOverrides | None = None,
    **settings: Any,
) -> MemoryService:
    """`open_memory` on `tmp_path`, the test's clock and doubles handed in directly."""
    config = world_config(embedder=embedder, plugins=plugins, **settings)
    return open_memory(
        tmp_path / "data",
        config=config,
        tape=tape,
        clock=clock,
        overrides=overrides,
        registry=world_registry(),
    )
