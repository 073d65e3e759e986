"""An in-memory `CursorStore` for tests and the embedded default before SQLite holds cursors."""

from __future__ import annotations

from memory_core.domain.errors import ValidationError

__all__ = ["InMemoryCursorStore"]


def _order_seq(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError("order_seq", "must be an integer >= 0")
    return value


class InMemoryCursorStore:
    """Cursors in a dict; `history` records every change so tests can see rewinds."""

    def __init__(self, initial: dict[str, int] | None = None) -> None:
        self._cursors: dict[str, int] = {
            session: _order_seq(value) for session, value in (initial or {}).items()
        }
        self.history: list[tuple[str, int]] = []

    def get(self, session_id: str) -> int:
        return self._cursors.get(session_id, 0)

    def advance(self, session_id: str, order_seq: int) -> int:
        return self._set(session_id, max(self.get(session_id), _order_seq(order_seq)))

    def rewind(self, session_id: str, order_seq: int) -> int:
        return self._set(session_id, min(self.get(session_id), _order_seq(order_seq)))

    def _set(self, session_id: str, value: int) -> int:
        if value != self.get(session_id):
            self.history.append((session_id, value))
        self._cursors[session_id] = value
        return value
