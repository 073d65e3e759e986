"""The user's view of their memories (`MemoryRecords`): get, list, edit, history."""

from __future__ import annotations

from collections.abc import Collection

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.services.memory import ClaimHistory, ClaimPage, ClaimStatus
from memory_plugins.api.loop import SyncLoop

__all__ = ["SyncRecords"]


class SyncRecords(SyncLoop):
    def get(self, agent_id: str, claim_id: str) -> Claim:
        return self.run(lambda m: m.get(agent_id, claim_id))

    def list(
        self,
        agent_id: str,
        *,
        kinds: Collection[ClaimKind | str] | None = None,
        statuses: Collection[ClaimStatus | str] | None = None,
        scope: Scope | ScopeFilter | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> ClaimPage:
        return self.run(
            lambda m: m.list(
                agent_id, kinds=kinds, statuses=statuses, scope=scope, limit=limit, after=after
            )
        )

    def update(
        self,
        agent_id: str,
        claim_id: str,
        content: str,
        *,
        expected_revision: int | None = None,
    ) -> Claim:
        return self.run(
            lambda m: m.update(agent_id, claim_id, content, expected_revision=expected_revision)
        )

    def history(self, agent_id: str, claim_id: str) -> ClaimHistory:
        return self.run(lambda m: m.history(agent_id, claim_id))
