"""The turn (`MemoryService.session`): a session's runtime addressed by (agent_id, session_id)."""

from __future__ import annotations

from memory_core.services.memory import MemoryService
from memory_core.services.read.runtime import TurnContribution
from memory_core.services.write.ingestion.types import SessionKind, TurnOutcome
from memory_plugins.api.loop import SyncLoop

__all__ = ["SyncTurn"]


class SyncTurn(SyncLoop):
    def prepare_turn(
        self,
        agent_id: str,
        session_id: str,
        message_id: str,
        user_text: str,
        *,
        budget_tokens: int | None = None,
        kind: SessionKind | str = SessionKind.MAIN,
        user_id: str | None = None,
        project_id: str | None = None,
    ) -> TurnContribution:
        """The session's contribution for this user message (see `MemoryRuntime`); the
        session recalls the claims of `user_id` and `project_id` too (R-SCOPE-1)."""

        async def work(memory: MemoryService) -> TurnContribution:
            runtime = memory.session(
                agent_id, session_id, kind=kind, user_id=user_id, project_id=project_id
            )
            return await runtime.prepare_turn(message_id, user_text, budget_tokens=budget_tokens)

        return self.run(work)

    def after_turn_settled(
        self,
        agent_id: str,
        session_id: str,
        outcome: TurnOutcome,
        *,
        kind: SessionKind | str = SessionKind.MAIN,
        user_id: str | None = None,
        project_id: str | None = None,
    ) -> bool:
        """Report a settled turn; extraction (if admitted) continues in the background."""

        async def work(memory: MemoryService) -> bool:
            # On the loop: the runtime spawns the extraction task on the running loop.
            runtime = memory.session(
                agent_id, session_id, kind=kind, user_id=user_id, project_id=project_id
            )
            return runtime.after_turn_settled(outcome)

        return self.run(work)

    def drain(self, agent_id: str, session_id: str) -> None:
        """Wait until the session's background extraction has settled."""

        async def work(memory: MemoryService) -> None:
            await memory.session(agent_id, session_id).drain()

        self.run(work)
