"""MemorySettings: every tunable default in one place (SPEC §11).

The fields live in one module per setting group (budget, retrieval, turn, providers, ingestion,
vectors, forgetting, maintenance); MemorySettings inherits them all, so a service still takes
one flat, validated value (`settings.top_k`). Values are validated on construction; the config
file loader turns a TOML table into this class and names any unknown key or wrong type. A new
setting goes into the group whose concept it tunes.
"""

from __future__ import annotations

import attrs

from memory_core.settings.budget import ContributionBudgetSettings
from memory_core.settings.forgetting import ForgettingSettings
from memory_core.settings.ingestion import (
    CHUNK_MIN_CODE_POINTS,
    CHUNK_MIN_TOKENS,
    IngestionSettings,
)
from memory_core.settings.maintenance import MaintenanceSettings
from memory_core.settings.providers import ProviderSettings
from memory_core.settings.retrieval import RetrievalSettings
from memory_core.settings.turn import TurnSettings
from memory_core.settings.vectors import VectorSettings

__all__ = [
    "CHUNK_MIN_CODE_POINTS",
    "CHUNK_MIN_TOKENS",
    "ContributionBudgetSettings",
    "ForgettingSettings",
    "IngestionSettings",
    "MaintenanceSettings",
    "MemorySettings",
    "ProviderSettings",
    "RetrievalSettings",
    "TurnSettings",
    "VectorSettings",
]


# attrs collects inherited fields starting from the last base, so the groups are listed in
# reverse: attrs.fields(MemorySettings) then reads budget first, maintenance last.
@attrs.frozen(kw_only=True)
class MemorySettings(
    MaintenanceSettings,
    ForgettingSettings,
    VectorSettings,
    IngestionSettings,
    ProviderSettings,
    TurnSettings,
    RetrievalSettings,
    ContributionBudgetSettings,
):
    def __attrs_post_init__(self) -> None:
        self._check_budget()
        self._check_providers()
        self._check_maintenance()
