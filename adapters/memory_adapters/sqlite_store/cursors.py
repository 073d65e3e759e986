"""`CursorStore` on SQLite: per-(agent, session) extraction cursors in the claim database.

A position only ever moves forward through `advance` (monotone max of (order_seq,
fragment_offset), compared as a row value) and backward through `rewind`, each one statement,
so two writers can never move it past each other.
"""

from __future__ import annotations

from pathlib import Path

from memory_adapters.sqlite_store.connection import LockWait, open_connection, translate_errors
from memory_adapters.sqlite_store.migrations import migrate
from memory_core.domain.errors import ValidationError
from memory_core.ports.clock import DomainClock
from memory_core.ports.cursor import CursorPosition

__all__ = ["SqliteCursorStore"]

_TABLE = "agent_memory_extract_cursor"


def _count(value: object, field: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(field, "must be an integer >= 0")
    return value


def _text(value: object, field: str, longest: int) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= longest:
        raise ValidationError(field, f"must be a string of 1..{longest} characters")
    return value


def _key(agent_id: object, session_id: object) -> tuple[str, str]:
    return _text(agent_id, "agent_id", 128), _text(session_id, "session_id", 256)


class SqliteCursorStore:
    """Opens its own connection to the claim database (WAL lets both share the file)."""

    def __init__(
        self,
        path: Path | str,
        *,
        clock: DomainClock,
        busy_timeout_ms: int = 5_000,
        loop_busy_timeout_ms: int = 250,
    ) -> None:
        self._clock = clock
        # The same lock-wait rule as the claim store: a cursor advance waiting on the loop
        # for another process's lock would hold every turn (connection.LockWait).
        self._conn = open_connection(
            Path(path),
            lock_wait=LockWait(timeout_ms=busy_timeout_ms, loop_timeout_ms=loop_busy_timeout_ms),
            hardened=True,
            synchronous="FULL",
            # It reads one row of a small table per call: nothing a map would save.
            mmap_bytes=0,
        )
        with translate_errors():
            migrate(self._conn, now_ms=self._now_ms())

    def _now_ms(self) -> int:
        return int(self._clock.now().timestamp() * 1000)

    def get(self, agent_id: str, session_id: str) -> int:
        return self.position(agent_id, session_id).order_seq

    def position(self, agent_id: str, session_id: str) -> CursorPosition:
        with translate_errors():
            row = self._conn.execute(
                f"SELECT order_seq, fragment_offset FROM {_TABLE}"
                " WHERE agent_id = ? AND session_id = ?",
                _key(agent_id, session_id),
            ).fetchone()
        if row is None:
            return CursorPosition()
        return CursorPosition(order_seq=int(row[0]), fragment_offset=int(row[1]))

    def advance(
        self, agent_id: str, session_id: str, order_seq: int, *, fragment_offset: int = 0
    ) -> int:
        key = _key(agent_id, session_id)
        seq = _count(order_seq, "order_seq")
        offset = _count(fragment_offset, "fragment_offset")
        with translate_errors():
            moved = self._conn.execute(
                f"""INSERT INTO {_TABLE} AS c
                      (agent_id, session_id, order_seq, fragment_offset, failures, updated_at)
                    VALUES (?, ?, ?, ?, 0, ?)
                    ON CONFLICT (agent_id, session_id) DO UPDATE
                      SET order_seq = excluded.order_seq,
                          fragment_offset = excluded.fragment_offset,
                          failures = 0,
                          updated_at = excluded.updated_at
                      WHERE (excluded.order_seq, excluded.fragment_offset)
                            > (c.order_seq, c.fragment_offset)
                    RETURNING order_seq""",
                (*key, seq, offset, self._now_ms()),
            ).fetchall()
        # No row back: the stored position was already at or past the one asked for.
        return int(moved[0][0]) if moved else self.get(*key)

    def rewind(self, agent_id: str, session_id: str, order_seq: int) -> int:
        key = _key(agent_id, session_id)
        seq = _count(order_seq, "order_seq")
        with translate_errors():
            self._conn.execute(
                f"""UPDATE {_TABLE}
                      SET order_seq = ?, fragment_offset = 0, failures = 0, updated_at = ?
                    WHERE agent_id = ? AND session_id = ? AND order_seq >= ?""",
                (seq, self._now_ms(), *key, seq),
            )
        return self.get(*key)

    def record_failure(self, agent_id: str, session_id: str) -> int:
        with translate_errors():
            (value,) = self._conn.execute(
                f"""INSERT INTO {_TABLE} AS c
                      (agent_id, session_id, order_seq, fragment_offset, failures, updated_at)
                    VALUES (?, ?, 0, 0, 1, ?)
                    ON CONFLICT (agent_id, session_id) DO UPDATE
                      SET failures = c.failures + 1, updated_at = excluded.updated_at
                    RETURNING failures""",
                (*_key(agent_id, session_id), self._now_ms()),
            ).fetchone()
        return int(value)

    def close(self) -> None:
        self._conn.close()
