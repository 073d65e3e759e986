"""The four rankings a retrieval evaluation compares, each over the real stores.

The rankings themselves are the service's (`MemoryService.rank`, see
`memory_core.services.memory.rankings` for what each source does); this keeps one
evaluation's scoring policy and counts the queries whose vector path failed. Every ranking
is a list of claim ids, best first.
"""

from __future__ import annotations

from memory_core.services.memory import MAX_DEPTH
from memory_core.services.memory import RankSource as RankMode
from memory_core.services.read.scoring import ScoringPolicy
from memory_plugins.eval.harness import EvalMemory

__all__ = ["MAX_DEPTH", "RankMode", "Rankers"]


class Rankers:
    """Rankings over one evaluation memory; `scoring` overrides the settings' policy."""

    def __init__(self, memory: EvalMemory, *, scoring: ScoringPolicy | None = None) -> None:
        self._memory = memory
        self._scoring = scoring or ScoringPolicy.from_settings(memory.settings)
        self.degraded = 0  # queries whose vector path failed (counted, never hidden)

    @property
    def scoring(self) -> ScoringPolicy:
        return self._scoring

    async def rank(self, mode: RankMode, agent_id: str, text: str, depth: int) -> list[str]:
        ranking = await self._memory.service.rank(
            agent_id, text, source=mode, depth=depth, scoring=self._scoring
        )
        self.degraded += int(ranking.degraded)
        return list(ranking.claim_ids)
