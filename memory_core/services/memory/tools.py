"""The model's tools: remember, recall, forget (R-WRITE-5, R-READ-3, R-FORGET-2).

`remember` is also the user's add (`user_add=True`), the one write that may bring back text
the user forgot. Every write takes the agent's write lock and schedules its embedding.
"""

from __future__ import annotations

from enum import StrEnum

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import (
    Category,
    Claim,
    ClaimDraft,
    ClaimKind,
    ClaimSource,
    WriteOrigin,
)
from memory_core.domain.scope import Scope, validate_agent_id
from memory_core.domain.temporal import ATEMPORAL, TemporalMetadata
from memory_core.domain.validation import (
    check_bool,
    check_enum,
    check_id,
    check_instance,
    check_int,
    check_number,
    check_session_id,
    check_text,
)
from memory_core.ports.claims import InsertStatus
from memory_core.ports.telemetry import SpanName
from memory_core.services.memory.parts import MemoryParts, scope_context
from memory_core.services.read.retrieval.service import (
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalResult,
)

__all__ = ["ForgetResult", "MemoryTools", "RememberResult", "RememberStatus"]

# The importance a remembered fact gets when the caller names none: above an extraction's
# default, because someone asked for it explicitly.
REMEMBER_IMPORTANCE = 0.7


class RememberStatus(StrEnum):
    STORED = "stored"
    ALREADY_KNOWN = "already_known"
    # The user forgot this exact text; only the user can bring it back (R-WRITE-5).
    REQUIRES_USER_REAUTHORIZATION = "requires_user_reauthorization"


@attrs.frozen(kw_only=True)
class RememberResult:
    status: RememberStatus
    claim_id: str | None
    claim: Claim | None = None  # the stored row (new or already known); None when refused
    released_tombstones: int = 0  # a user add released the tombstones of this text

    @property
    def reauthorized(self) -> bool:
        return self.released_tombstones > 0


@attrs.frozen(kw_only=True)
class ForgetResult:
    """`memory_forget` archives: the row stays on this machine, out of recall (R-FORGET-2)."""

    claim_id: str
    archived: bool
    claim: Claim  # the archived row
    note: str = (
        "Archived: the memory is kept locally and can be restored, but it no longer takes part "
        "in recall. Deleting it permanently is a separate user action."
    )


class MemoryTools(MemoryParts):
    async def remember(
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
        """Store one fact. The model's `memory_remember` never releases a tombstone; only an
        explicit user add (`user_add=True`) brings back forgotten text (R-WRITE-5).
        `temporal` is for callers that know when the fact holds (the model's tool does not
        say; an evaluation replaying dated facts does)."""
        validate_agent_id(agent_id)
        user_add = check_bool(user_add, "user_add")
        draft = ClaimDraft(
            agent_id=agent_id,
            kind=check_enum(kind, ClaimKind, "kind"),
            content=check_text(content, "content"),
            category=None if category is None else check_enum(category, Category, "category"),
            importance=check_number(importance, "importance", minimum=0.0, maximum=1.0),
            temporal=check_instance(temporal, TemporalMetadata, "temporal"),
            scope=Scope.agent() if scope is None else check_instance(scope, Scope, "scope"),
            source=ClaimSource(
                session_id=check_session_id(session_id),
                extractor="user" if user_add else "tool",
            ),
        )
        origin = WriteOrigin.USER_ADD if user_add else WriteOrigin.MODEL_TOOL
        async with self._coordinator.exclusive(agent_id):
            outcome = self.store.insert(draft, origin=origin, now=self._clock.now())
        if outcome.status is InsertStatus.SUPPRESSED:
            return RememberResult(
                status=RememberStatus.REQUIRES_USER_REAUTHORIZATION, claim_id=None
            )
        assert outcome.claim is not None
        if outcome.status is InsertStatus.DUPLICATE:
            return RememberResult(
                status=RememberStatus.ALREADY_KNOWN,
                claim_id=outcome.claim.id,
                claim=outcome.claim,
            )
        self._schedule_embedding(agent_id)
        return RememberResult(
            status=RememberStatus.STORED,
            claim_id=outcome.claim.id,
            claim=outcome.claim,
            released_tombstones=outcome.released_tombstones,
        )

    async def recall(
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
        """The owner's claims relevant to `query`: Agent scope, plus the scopes whose ids
        the caller names — a user-scoped claim is found only with its `user_id`, a
        project-scoped one only with its `project_id` (R-SCOPE-1)."""
        validate_agent_id(agent_id)
        return await self.retrieval.retrieve(
            RetrievalRequest(
                agent_id=agent_id,
                query=check_text(query, "query"),
                purpose=check_enum(purpose, RetrievalPurpose, "purpose"),
                top_k=None if top_k is None else check_int(top_k, "top_k", minimum=1),
                context=scope_context(session_id, user_id, project_id),
            ),
            deadline=deadline or self._deadline(self.settings.prepare_turn_deadline_ms / 1000),
            cancel=cancel or CancellationToken(),
        )

    async def forget(self, agent_id: str, claim_id: str) -> ForgetResult:
        """`memory_forget`: recoverable archive (R-FORGET-2)."""
        validate_agent_id(agent_id)
        check_id(claim_id, "claim_id")
        record = {"gen_ai.memory.record.id": claim_id, "agent_memory.recoverable": True}
        with self._operation(SpanName.FORGET, "delete_memory", agent_id, record):
            async with self._coordinator.exclusive(agent_id):
                claim = self.store.archive(agent_id, claim_id, now=self._clock.now())
            await self.index.forget(
                agent_id,
                [claim.id],
                deadline=self._deadline(self.settings.vector_clear_seconds),
                cancel=CancellationToken(),
            )
        return ForgetResult(claim_id=claim.id, archived=True, claim=claim)
