"""The ingestion-cursor port: how far each session's tape has been extracted.

A cursor is an order_seq (0 = nothing extracted yet). The ingestion runtime advances it only
after a chunk's owned work has settled (R-WRITE-8) and rewinds it when messages are edited,
deleted or retried (R-WRITE-3). Local storage answers at once, so the methods are synchronous.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["CursorStore"]


@runtime_checkable
class CursorStore(Protocol):
    """Per-session extraction cursors, keyed by the host's session id."""

    def get(self, session_id: str) -> int:
        """The cursor; 0 for a session never seen."""
        ...

    def advance(self, session_id: str, order_seq: int) -> int:
        """Monotone: set the cursor to max(current, order_seq) and return the result, so a
        late or repeated commit can never move it backwards. ValidationError for a negative
        or non-integer order_seq."""
        ...

    def rewind(self, session_id: str, order_seq: int) -> int:
        """Set the cursor to min(current, order_seq) and return the result: messages after
        `order_seq` will be extracted again. `rewind(session, 0)` forgets the session's
        progress (transcript clear). ValidationError for a negative or non-integer order_seq."""
        ...
