"""Health and the known agents (`MemoryDiagnostics`)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.services.memory import HealthReport
from memory_plugins.api.loop import SyncLoop

__all__ = ["SyncDiagnostics"]


class SyncDiagnostics(SyncLoop):
    def known_agents(self) -> list[str]:
        return self._run_sync(lambda m: m.known_agents())

    def diagnose(self, agent_ids: Sequence[str] = ()) -> HealthReport:
        return self.run(lambda m: m.diagnose(agent_ids))
