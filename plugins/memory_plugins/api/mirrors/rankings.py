"""One source's ranking of a query, for evaluation (`MemoryRankings`)."""

from __future__ import annotations

from memory_core.services.memory import Ranking, RankSource
from memory_core.services.read.scoring import ScoringPolicy
from memory_plugins.api.loop import SyncLoop

__all__ = ["SyncRankings"]


class SyncRankings(SyncLoop):
    def rank(
        self,
        agent_id: str,
        query: str,
        *,
        source: RankSource,
        depth: int,
        scoring: ScoringPolicy | None = None,
    ) -> Ranking:
        return self.run(
            lambda m: m.rank(agent_id, query, source=source, depth=depth, scoring=scoring)
        )
