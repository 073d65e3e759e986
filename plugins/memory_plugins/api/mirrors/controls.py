"""The user's controls (`MemoryControls`): claims by id, restore, delete, clear, retire."""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.domain.claims import Claim
from memory_core.domain.scope import ScopeFilter
from memory_core.services.memory import ClearListener, ClearResult
from memory_plugins.api.loop import SyncLoop

__all__ = ["SyncControls"]


class SyncControls(SyncLoop):
    def get_claim(self, agent_id: str, claim_id: str) -> Claim:
        return self._run_sync(lambda m: m.get_claim(agent_id, claim_id))

    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        return self._run_sync(
            lambda m: m.list_claims(
                agent_id,
                scope_filter=scope_filter,
                include_inactive=include_inactive,
                limit=limit,
                after_id=after_id,
            )
        )

    def restore(self, agent_id: str, claim_id: str) -> Claim:
        return self.run(lambda m: m.restore(agent_id, claim_id))

    def delete(self, agent_id: str, claim_id: str) -> int:
        return self.run(lambda m: m.delete(agent_id, claim_id))

    def clear(self, agent_id: str, *, progress: ClearListener | None = None) -> ClearResult:
        """Agent clear; `progress` is called on the memory's loop thread."""
        return self.run(lambda m: m.clear(agent_id, progress=progress))

    def resume_clears(self, *, progress: ClearListener | None = None) -> Sequence[ClearResult]:
        return self.run(lambda m: m.resume_clears(progress=progress))

    def retire(self, agent_id: str) -> bool:
        return self.run(lambda m: m.retire(agent_id))
