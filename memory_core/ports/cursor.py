"""The ingestion-cursor port: how far each agent's extraction of each session has come.

A cursor belongs to one (agent, session): two agents on one conversation extract it each for
themselves. Its position is an order_seq (0 = nothing extracted yet) plus how many code points
of the next extractable message are already extracted — a message too long for one chunk is
extracted fragment by fragment across passes, and a restart resumes mid-message. The
ingestion runtime advances it only after a chunk's owned work has settled (R-WRITE-8) and
rewinds it when messages are edited, deleted or retried (R-WRITE-3). It also counts the failed
attempts at the chunk that starts there, so one chunk the model always refuses is given up
after a bounded number (R-WRITE-6). Local storage answers at once: the methods are synchronous.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

__all__ = ["CursorPosition", "CursorStore"]


@attrs.frozen(kw_only=True, order=True)
class CursorPosition:
    """Ordered as the tape is read: by order_seq, then by the offset into the next message."""

    order_seq: int = 0  # every message through this one is extracted (or passed over)
    fragment_offset: int = 0  # code points of the next extractable message already extracted


@runtime_checkable
class CursorStore(Protocol):
    """Extraction cursors keyed by (agent id, host session id)."""

    def get(self, agent_id: str, session_id: str) -> int:
        """The position's order_seq; 0 for a pair never seen."""
        ...

    def position(self, agent_id: str, session_id: str) -> CursorPosition:
        """The whole position; `CursorPosition()` for a pair never seen."""
        ...

    def advance(
        self, agent_id: str, session_id: str, order_seq: int, *, fragment_offset: int = 0
    ) -> int:
        """Monotone: move to max(current, (order_seq, fragment_offset)) and return the
        order_seq, so a late or repeated commit can never move it backwards. A move resets
        the failure count. ValidationError for a negative or non-integer value."""
        ...

    def rewind(self, agent_id: str, session_id: str, order_seq: int) -> int:
        """When `order_seq` <= the current order_seq: move to (order_seq, 0) with no failures,
        so messages after `order_seq` are extracted again; otherwise leave the position. Returns
        the order_seq. `rewind(agent, session, 0)` forgets the progress (transcript clear).
        ValidationError for a negative or non-integer order_seq."""
        ...

    def record_failure(self, agent_id: str, session_id: str) -> int:
        """Count one more failed attempt at the chunk starting at the current position and
        return the count (1 for the first)."""
        ...
