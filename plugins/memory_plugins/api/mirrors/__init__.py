"""SyncMemory's mirrors of the facade, one module per facade part
(memory_core/services/memory): each method runs the service's method on the private loop."""

from __future__ import annotations

from memory_plugins.api.mirrors.controls import SyncControls
from memory_plugins.api.mirrors.diagnostics import SyncDiagnostics
from memory_plugins.api.mirrors.directives import SyncDirectives
from memory_plugins.api.mirrors.rankings import SyncRankings
from memory_plugins.api.mirrors.records import SyncRecords
from memory_plugins.api.mirrors.tools import SyncTools
from memory_plugins.api.mirrors.turn import SyncTurn
from memory_plugins.api.mirrors.upkeep import SyncUpkeep

__all__ = [
    "SyncControls",
    "SyncDiagnostics",
    "SyncDirectives",
    "SyncRankings",
    "SyncRecords",
    "SyncTools",
    "SyncTurn",
    "SyncUpkeep",
]
