"""MemoryService: the facade a host holds — one per process and configuration (R-HOST-1).

It owns nothing concrete: the composition root hands it ports and services. Hosts get a
per-session `MemoryRuntime` from `session(...)` and call every use case here — the model's
tools, the user's controls, the directive plane, upkeep, diagnostics and the rankings an
evaluation compares — one group per module of this package. The CLI, the evaluation and the
demo are clients of this facade like any host; none of them drives a store. Every operation
names its agent (R-STORE-3).
"""

from __future__ import annotations

from memory_core.services.memory.controls import MemoryControls
from memory_core.services.memory.diagnostics import MemoryDiagnostics
from memory_core.services.memory.directives import MemoryDirectives
from memory_core.services.memory.rankings import MemoryRankings
from memory_core.services.memory.tools import MemoryTools
from memory_core.services.memory.upkeep import MemoryUpkeep

__all__ = ["MemoryService"]


class MemoryService(
    MemoryTools,
    MemoryControls,
    MemoryDirectives,
    MemoryUpkeep,
    MemoryDiagnostics,
    MemoryRankings,
):
    """The one door to memory: see the group modules for each use case."""
