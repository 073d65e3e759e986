"""`CursorStore` on SQLite: per-session extraction cursors in the claim database.

A cursor only ever moves forward through `advance` (monotone max) and backward through
`rewind` (min), each one statement, so two writers can never move it past each other.
"""

from __future__ import annotations

from pathlib import Path

from memory_adapters.sqlite_store.connection import open_connection, translate_errors
from memory_adapters.sqlite_store.migrations import migrate
from memory_core.domain.errors import ValidationError
from memory_core.ports.clock import DomainClock

__all__ = ["SqliteCursorStore"]


def _order_seq(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError("order_seq", "must be an integer >= 0")
    return value


def _session(value: object) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= 256:
        raise ValidationError("session_id", "must be a string of 1..256 characters")
    return value


class SqliteCursorStore:
    """Opens its own connection to the claim database (WAL lets both share the file)."""

    def __init__(
        self, path: Path | str, *, clock: DomainClock, busy_timeout_ms: int = 5_000
    ) -> None:
        self._clock = clock
        self._conn = open_connection(
            Path(path), busy_timeout_ms=busy_timeout_ms, hardened=True, synchronous="FULL"
        )
        with translate_errors():
            migrate(self._conn, now_ms=self._now_ms())

    def _now_ms(self) -> int:
        return int(self._clock.now().timestamp() * 1000)

    def get(self, session_id: str) -> int:
        with translate_errors():
            row = self._conn.execute(
                "SELECT order_seq FROM agent_memory_cursor WHERE session_id = ?",
                (_session(session_id),),
            ).fetchone()
        return int(row[0]) if row else 0

    def advance(self, session_id: str, order_seq: int) -> int:
        return self._write(session_id, _order_seq(order_seq), "max")

    def rewind(self, session_id: str, order_seq: int) -> int:
        return self._write(session_id, _order_seq(order_seq), "min")

    def _write(self, session_id: str, order_seq: int, pick: str) -> int:
        # A session never seen counts as 0: advancing inserts, rewinding an unknown one is 0.
        initial = order_seq if pick == "max" else 0
        with translate_errors():
            (value,) = self._conn.execute(
                f"""INSERT INTO agent_memory_cursor (session_id, order_seq, updated_at)
                    VALUES (?, ?, ?)
                    ON CONFLICT (session_id) DO UPDATE
                      SET order_seq = {pick}(order_seq, ?),
                          updated_at = excluded.updated_at
                    RETURNING order_seq""",
                (_session(session_id), initial, self._now_ms(), order_seq),
            ).fetchone()
        return int(value)

    def close(self) -> None:
        self._conn.close()
