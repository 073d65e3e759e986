"""The plugin host's errors: what loading, registering and looking up plugins can raise.

They belong to the host, not to the core: nothing in memory_core loads a plugin. They stay
`AgentMemoryError`s, so a host catching the library's base error still catches them.
"""

from __future__ import annotations

from memory_core.domain.errors import AgentMemoryError

__all__ = ["DuplicatePluginError", "PluginError", "PluginLoadError", "PluginNotFound"]


class PluginError(AgentMemoryError):
    """Base of plugin-host failures."""


class PluginNotFound(PluginError, LookupError):
    """No registration of that name in that port family."""


class PluginLoadError(PluginError):
    """A plugin failed to import or register; names the plugin, distribution and error."""


class DuplicatePluginError(PluginError):
    """Two registrations share one name in one family; names both distributions."""
