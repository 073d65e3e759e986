"""MemoryService: the facade a host holds — one per process and configuration (R-HOST-1).

It owns nothing concrete: the composition root hands it ports and services. Hosts get a
per-session `MemoryRuntime` from `session(...)` and call every use case here — the model's
tools, the user's controls, the directive plane, upkeep, diagnostics and the rankings an
evaluation compares — one group per module of this package. The CLI, the evaluation and the
demo are clients of this facade like any host; none of them drives a store. Every operation
names its agent (R-STORE-3).
"""

from __future__ import annotations

from collections.abc import Callable

from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.validation import check_enum, check_session_id
from memory_core.services.memory.controls import MemoryControls
from memory_core.services.memory.diagnostics import MemoryDiagnostics
from memory_core.services.memory.directives import MemoryDirectives
from memory_core.services.memory.rankings import MemoryRankings
from memory_core.services.memory.records import MemoryRecords
from memory_core.services.memory.tools import MemoryTools
from memory_core.services.memory.upkeep import MemoryUpkeep
from memory_core.services.read.runtime import MemoryRuntime
from memory_core.services.write.ingestion.types import SessionKind

__all__ = ["MemoryService"]


class MemoryService(
    MemoryTools,
    MemoryRecords,
    MemoryControls,
    MemoryDirectives,
    MemoryUpkeep,
    MemoryDiagnostics,
    MemoryRankings,
):
    """The one door to memory: see the group modules for each use case."""

    _closers: tuple[Callable[[], None], ...] = ()

    def on_closed(self, release: Callable[[], None]) -> None:
        """Run `release` once `aclose` has closed everything (the composition root's data
        dir lock: held exactly as long as the stores are open)."""
        self._closers = (*self._closers, release)

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            closers, self._closers = self._closers, ()
            for release in closers:
                release()

    def session(
        self,
        agent_id: str,
        session_id: str,
        *,
        kind: SessionKind | str = SessionKind.MAIN,
        user_id: str | None = None,
        project_id: str | None = None,
    ) -> MemoryRuntime:
        # The boundary's checks (R-DOM-4) before the runtime is built or looked up: a session
        # id with surrounding whitespace would alias another session, a bad kind would be a
        # bare ValueError.
        validate_agent_id(agent_id)
        if session_id is None:
            raise ValidationError("session_id", "required")
        check_session_id(session_id)
        return super().session(
            agent_id,
            session_id,
            kind=check_enum(kind, SessionKind, "kind"),
            user_id=user_id,
            project_id=project_id,
        )
