"""The plugin host and application shell: hookspecs, loading, registry, composition root, CLI.

`hookimpl` is what plugin modules decorate their registration functions with. Hosts load
plugins with `load_plugins()` and build ports through the typed `PluginRegistry`; the
config file is read with `load_config()`.

The host API (`open_memory`, `open_memory_async`, `SyncMemory`, the tool surface) is
re-exported from `memory_plugins.api` and `memory_plugins.tools` lazily, on first access, so
a plugin importing `hookimpl` does not pull in the composition root.
"""

from __future__ import annotations

from memory_plugins.config import MemoryConfig, PluginChoice, load_config
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import hookimpl
from memory_plugins.loader import LoadResult, load_plugins
from memory_plugins.registry import PluginFailure, PluginRegistry, Registration

# name -> module it is re-exported from, imported on first access (PEP 562).
_LAZY = {
    "SyncMemory": "memory_plugins.api",
    "open_memory": "memory_plugins.api",
    "open_memory_async": "memory_plugins.api",
    "TOOL_DEFINITIONS": "memory_plugins.tools",
    "handle_tool_call": "memory_plugins.tools",
    "tool_definitions": "memory_plugins.tools",
}

__all__ = [
    "TOOL_DEFINITIONS",
    "FactoryContext",
    "LoadResult",
    "MemoryConfig",
    "PluginChoice",
    "PluginFailure",
    "PluginRegistry",
    "Registration",
    "SyncMemory",
    "handle_tool_call",
    "hookimpl",
    "load_config",
    "load_plugins",
    "open_memory",
    "open_memory_async",
    "tool_definitions",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memory_plugins' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
