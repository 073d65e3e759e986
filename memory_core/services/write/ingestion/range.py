"""The range a pass extracts and whether it may commit: the projection's current range, or
the effective tape after a projection rebuild (commits allowed only if the rebuild
succeeded), or — the projection failing — the tape without commits (R-WRITE-8), sparing the
projection for a cooldown; and the admission thresholds (reference §7.1)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import OperationCancelled
from memory_core.ports.tape import TapeEntry
from memory_core.services.write.chunking import is_extractable
from memory_core.services.write.ingestion.services import IngestionServices
from memory_core.services.write.ingestion.types import TurnOutcome

__all__ = ["RangeReader"]

_log = logging.getLogger(__name__)


class RangeReader:
    """Reads one session's ranges; remembers when its projection failed (the cooldown)."""

    def __init__(self, services: IngestionServices, *, session_id: str) -> None:
        self._s = services
        self.session_id = session_id
        self._projection_down_until: float | None = None

    def meets_thresholds(self, entries: Sequence[TapeEntry], turn: TurnOutcome) -> bool:
        if turn.had_tool_use:
            return True
        messages = [entry for entry in entries if is_extractable(entry)]
        policy = self._s.policy
        if len(messages) >= policy.min_messages:
            return True
        visible = sum(len(entry.content.strip()) for entry in messages)
        return (
            len(messages) >= policy.min_messages_with_text and visible >= policy.min_visible_chars
        )

    async def read(self, cursor: int, cancel: CancellationToken) -> tuple[list[TapeEntry], bool]:
        """The entries after `cursor`, and whether a commit may advance the cursor."""
        projection_up = (
            self._projection_down_until is None
            or self._s.infra_clock.monotonic() >= self._projection_down_until
        )
        commit_allowed = False
        if projection_up:
            try:
                current = await self._s.projection.read_current_range(
                    self.session_id,
                    cursor,
                    deadline=self._deadline(self._s.policy.read_seconds),
                    cancel=cancel,
                )
                if current.current:
                    return list(current.entries), True
                await self._s.projection.rebuild_projection(
                    self.session_id,
                    deadline=self._deadline(self._s.policy.read_seconds),
                    cancel=cancel,
                )
                commit_allowed = True
            except OperationCancelled:
                raise
            except Exception as exc:
                # Fall back to the tape, without cursor commits, and spare the projection
                # for a while instead of failing on it every turn.
                _log.warning(
                    "ingestion projection of session %s unavailable: %s",
                    self.session_id,
                    type(exc).__name__,
                )
                self._projection_down_until = (
                    self._s.infra_clock.monotonic() + self._s.policy.projection_cooldown_seconds
                )
        effective = await self._s.tape.get_by_session(
            self.session_id, deadline=self._deadline(self._s.policy.read_seconds), cancel=cancel
        )
        return [entry for entry in effective if entry.order_seq > cursor], commit_allowed

    def _deadline(self, seconds: float) -> Deadline:
        return Deadline.after(self._s.infra_clock, seconds)
