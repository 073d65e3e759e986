"""The plugin host and application shell: hookspecs, loading, registry, composition root, CLI.

`hookimpl` is what plugin modules decorate their registration functions with. Hosts load
plugins with `load_plugins()` and build ports through the typed `PluginRegistry`; the
config file is read with `load_config()`.
"""

from __future__ import annotations

from memory_plugins.config import MemoryConfig, PluginChoice, load_config
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import hookimpl
from memory_plugins.loader import LoadResult, load_plugins
from memory_plugins.registry import PluginFailure, PluginRegistry, Registration

__all__ = [
    "FactoryContext",
    "LoadResult",
    "MemoryConfig",
    "PluginChoice",
    "PluginFailure",
    "PluginRegistry",
    "Registration",
    "hookimpl",
    "load_config",
    "load_plugins",
]
