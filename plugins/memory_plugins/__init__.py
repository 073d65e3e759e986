"""The plugin host and application shell: hookspecs, loading, registry, composition root, CLI.

`hookimpl` is what plugin modules decorate their registration functions with.
"""

from __future__ import annotations

from memory_plugins.hookspecs import hookimpl

__all__ = ["hookimpl"]
