"""The model's tools (`MemoryTools`): remember, recall, forget, and the tool-call door."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Category, ClaimKind
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import ATEMPORAL, TemporalMetadata
from memory_core.services.memory import ForgetResult, RememberResult
from memory_core.services.memory.tools import REMEMBER_IMPORTANCE
from memory_core.services.read.retrieval.service import RetrievalPurpose, RetrievalResult
from memory_plugins.api.loop import SyncLoop
from memory_plugins.tools import handle_tool_call

__all__ = ["SyncTools"]


class SyncTools(SyncLoop):
    def remember(
        self,
        agent_id: str,
        content: str,
        *,
        session_id: str | None = None,
        scope: Scope | None = None,
        user_add: bool = False,
        kind: ClaimKind = ClaimKind.SEMANTIC,
        category: Category | None = None,
        importance: float = REMEMBER_IMPORTANCE,
        temporal: TemporalMetadata = ATEMPORAL,
    ) -> RememberResult:
        return self.run(
            lambda m: m.remember(
                agent_id,
                content,
                session_id=session_id,
                scope=scope,
                user_add=user_add,
                kind=kind,
                category=category,
                importance=importance,
                temporal=temporal,
            )
        )

    def recall(
        self,
        agent_id: str,
        query: str,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        project_id: str | None = None,
        top_k: int | None = None,
        purpose: RetrievalPurpose = RetrievalPurpose.RECALL,
        deadline: Deadline | None = None,
        cancel: CancellationToken | None = None,
    ) -> RetrievalResult:
        return self.run(
            lambda m: m.recall(
                agent_id,
                query,
                session_id=session_id,
                user_id=user_id,
                project_id=project_id,
                top_k=top_k,
                purpose=purpose,
                deadline=deadline,
                cancel=cancel,
            )
        )

    def forget(self, agent_id: str, claim_id: str) -> ForgetResult:
        return self.run(lambda m: m.forget(agent_id, claim_id))

    def handle_tool_call(
        self,
        agent_id: str,
        session_id: str | None,
        name: str,
        arguments: str | Mapping[str, Any] | None,
        *,
        user_id: str | None = None,
        project_id: str | None = None,
        allow_user_tools: bool = False,
    ) -> dict[str, Any]:
        """`memory_plugins.tools.handle_tool_call` on this memory."""
        return self.run(
            lambda m: handle_tool_call(
                m,
                agent_id,
                session_id,
                name,
                arguments,
                user_id=user_id,
                project_id=project_id,
                allow_user_tools=allow_user_tools,
            )
        )
