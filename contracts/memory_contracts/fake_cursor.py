"""An in-memory `CursorStore` for tests and the embedded default before SQLite holds cursors."""

from __future__ import annotations

from memory_core.domain.errors import ValidationError
from memory_core.ports.cursor import CursorPosition

__all__ = ["InMemoryCursorStore"]

Key = tuple[str, str]  # (agent id, session id)


def _count(value: object, field: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(field, "must be an integer >= 0")
    return value


class InMemoryCursorStore:
    """Cursors in a dict; `history` records every (agent, session, order_seq) change so
    tests can see rewinds."""

    def __init__(self, initial: dict[Key, int] | None = None) -> None:
        self._positions: dict[Key, CursorPosition] = {
            key: CursorPosition(order_seq=_count(value, "order_seq"))
            for key, value in (initial or {}).items()
        }
        self._failures: dict[Key, int] = {}
        self.history: list[tuple[str, str, int]] = []

    def get(self, agent_id: str, session_id: str) -> int:
        return self.position(agent_id, session_id).order_seq

    def position(self, agent_id: str, session_id: str) -> CursorPosition:
        return self._positions.get((agent_id, session_id), CursorPosition())

    def advance(
        self, agent_id: str, session_id: str, order_seq: int, *, fragment_offset: int = 0
    ) -> int:
        wanted = CursorPosition(
            order_seq=_count(order_seq, "order_seq"),
            fragment_offset=_count(fragment_offset, "fragment_offset"),
        )
        if wanted > self.position(agent_id, session_id):
            self._move(agent_id, session_id, wanted)
        return self.get(agent_id, session_id)

    def rewind(self, agent_id: str, session_id: str, order_seq: int) -> int:
        if _count(order_seq, "order_seq") <= self.get(agent_id, session_id):
            self._move(agent_id, session_id, CursorPosition(order_seq=order_seq))
        return self.get(agent_id, session_id)

    def record_failure(self, agent_id: str, session_id: str) -> int:
        key = (agent_id, session_id)
        self._failures[key] = self._failures.get(key, 0) + 1
        return self._failures[key]

    def _move(self, agent_id: str, session_id: str, position: CursorPosition) -> None:
        key = (agent_id, session_id)
        if position.order_seq != self.get(agent_id, session_id):
            self.history.append((agent_id, session_id, position.order_seq))
        self._positions[key] = position
        self._failures.pop(key, None)
