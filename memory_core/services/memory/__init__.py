"""The memory facade, one module per group of use cases (see `facade`).

`ClearProgress` is the port's value, re-exported because clients hear it from `clear`.
"""

from memory_core.ports.claims import ClearProgress
from memory_core.services.memory.controls import ClearListener, ClearResult
from memory_core.services.memory.diagnostics import (
    AgentHealth,
    CheckStatus,
    HealthCheck,
    HealthReport,
    ProviderProbe,
)
from memory_core.services.memory.facade import MemoryService
from memory_core.services.memory.rankings import MAX_DEPTH, Ranking, RankSource
from memory_core.services.memory.records import ClaimHistory, ClaimPage, ClaimStatus
from memory_core.services.memory.tools import ForgetResult, RememberResult, RememberStatus
from memory_core.services.memory.upkeep import ReindexReport

__all__ = [
    "MAX_DEPTH",
    "AgentHealth",
    "CheckStatus",
    "ClaimHistory",
    "ClaimPage",
    "ClaimStatus",
    "ClearListener",
    "ClearProgress",
    "ClearResult",
    "ForgetResult",
    "HealthCheck",
    "HealthReport",
    "MemoryService",
    "ProviderProbe",
    "RankSource",
    "Ranking",
    "ReindexReport",
    "RememberResult",
    "RememberStatus",
]
