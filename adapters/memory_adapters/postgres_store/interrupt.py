"""One port call at a time on a store's connection, and the interrupt of a running one.

The read path runs claim-store calls on an executor thread (`memory_adapters.offload`)
while writes still run on the event loop's thread, both on the store's one psycopg
connection. psycopg serialises single statements, not transactions: a read slipped between
the statements of a write would run inside its transaction, and the read's failure would
abort it. The gate holds a whole call, whichever thread makes it.

`interrupt(conn, thread_id)` cancels the running statement (`cancel_safe`) only while
`thread_id` still holds the gate, and keeps the holder from leaving until the request is
delivered, so a late cancel never lands on the next caller's statement. The cancelled call
fails in its own thread (QueryCanceled, translated to DeadlineExceeded) and rolls back its
transaction; the connection is idle and usable again at once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

import psycopg

__all__ = ["StatementGate"]

_log = logging.getLogger(__name__)


class StatementGate:
    """Re-entrant per thread: a call's helpers may nest `held()`."""

    def __init__(self, *, cancel_timeout_s: float) -> None:
        self._calls = threading.RLock()
        self._state = threading.Lock()  # guards the holder; held while a cancel is sent
        self._holder: int | None = None
        self._depth = 0
        self._cancel_timeout_s = cancel_timeout_s

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._calls:
            with self._state:
                self._holder = threading.get_ident()
                self._depth += 1
            try:
                yield
            finally:
                with self._state:
                    self._depth -= 1
                    if self._depth == 0:
                        self._holder = None

    def interrupt(self, conn: psycopg.Connection, thread_id: int) -> bool:
        """Cancel the statement of the call `thread_id` is making; False when it is not
        making one any more or the request failed (the statement timeout still bounds it)."""
        with self._state:
            if self._holder != thread_id or conn.closed:
                return False
            try:
                conn.cancel_safe(timeout=self._cancel_timeout_s)
            except psycopg.Error as exc:
                _log.warning("statement cancel request failed: %s", type(exc).__name__)
                return False
            return True
