"""One asyncio connection per vector store, every call a transaction under its deadline.

The deadline reaches the server twice: as `SET LOCAL statement_timeout` (the server stops
the statement itself) and as a client-side wait of the same length plus `grace_seconds`
(for a server that stopped answering). Cancellation — the token, or the awaiting task being
cancelled — sends a protocol cancel request (`cancel_safe`). A call that still has not
settled after the grace period gets its connection closed, which the server answers by
rolling the transaction back; the next call reconnects. So no call hangs (R-VEC-3), and an
interrupted call leaves nothing half-written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg

from memory_adapters.postgres_store.connection import ConnectionSettings, aconnect, search_path_sql
from memory_adapters.postgres_store.errors import translate
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    DeadlineExceeded,
    OperationCancelled,
    StoreError,
)

__all__ = ["AsyncSession", "precheck"]

_log = logging.getLogger(__name__)

T = TypeVar("T")
Work = Callable[[psycopg.AsyncConnection], Awaitable[T]]


def precheck(deadline: Deadline, cancel: CancellationToken, what: str) -> None:
    """Refuse before any work: a cancelled token, then an expired deadline."""
    cancel.raise_if_cancelled()
    deadline.raise_if_expired(f"vector store {what}")


class AsyncSession:
    """Lazily connected; serialises calls (one statement stream per connection)."""

    def __init__(
        self,
        settings: ConnectionSettings,
        extension_schemas: tuple[str, ...],
        *,
        grace_seconds: float,
    ) -> None:
        self._settings = settings
        self._extension_schemas = extension_schemas
        self._grace = grace_seconds
        self._conn: psycopg.AsyncConnection | None = None
        self._lock: asyncio.Lock | None = None
        self.closed = False
        self.suspect = False  # the last call overran and its connection was dropped

    async def run(
        self, work: Work[T], *, what: str, deadline: Deadline, cancel: CancellationToken
    ) -> T:
        """`work(conn)` inside one transaction, or a typed error."""
        precheck(deadline, cancel, what)
        if self.closed:
            raise StoreError("vector store is closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        try:
            await asyncio.wait_for(self._lock.acquire(), timeout=deadline.remaining())
        except TimeoutError:
            raise DeadlineExceeded(f"vector store {what} waited past its deadline") from None
        try:
            precheck(deadline, cancel, what)
            conn = await self._connection()
            return await self._guarded(conn, work, what, deadline, cancel)
        finally:
            self._lock.release()

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                await conn.close()

    # --- internals -----------------------------------------------------------------------
    async def _connection(self) -> psycopg.AsyncConnection:
        if self._conn is not None and not self._conn.closed:
            return self._conn
        conn = await aconnect(self._settings)
        try:
            await conn.execute(search_path_sql(self._settings.schema, self._extension_schemas))
        except psycopg.Error as exc:
            await conn.close()
            raise translate(exc, "connect") from exc
        self._conn = conn
        return conn

    async def _guarded(
        self,
        conn: psycopg.AsyncConnection,
        work: Work[T],
        what: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> T:
        budget = deadline.remaining()
        timeout_ms = max(1, math.ceil(budget * 1000))
        task = asyncio.ensure_future(_transaction(conn, work, timeout_ms))
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()
        unregister = cancel.on_cancel(lambda: loop.call_soon_threadsafe(woken.set))
        wake = asyncio.ensure_future(woken.wait())
        try:
            await asyncio.wait(
                {task, wake}, timeout=budget + self._grace, return_when="FIRST_COMPLETED"
            )
        except asyncio.CancelledError:
            await self._stop(conn, task, what)
            raise
        finally:
            unregister()
            wake.cancel()
        if not task.done():
            await self._stop(conn, task, what)
        return self._outcome(task, what, cancel)

    async def _stop(
        self, conn: psycopg.AsyncConnection, task: asyncio.Future[T], what: str
    ) -> None:
        """Ask the server to cancel; past the grace period, drop the connection."""
        with contextlib.suppress(psycopg.Error, OSError):
            await conn.cancel_safe(timeout=max(self._grace, 0.1))
        done, _ = await asyncio.wait({task}, timeout=max(self._grace, 0.1))
        if done:
            return
        _log.error("vector store call %s did not settle; dropping its connection", what)
        self.suspect = True
        self._conn = None
        with contextlib.suppress(psycopg.Error, OSError):
            await conn.close()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task

    def _outcome(self, task: asyncio.Future[T], what: str, cancel: CancellationToken) -> T:
        if task.cancelled():
            if cancel.cancelled:
                raise OperationCancelled(f"vector store call {what} was cancelled")
            raise DeadlineExceeded(f"vector store call {what} exceeded its deadline")
        exc = task.exception()
        if exc is None:
            self.suspect = False
            return task.result()
        if isinstance(exc, psycopg.errors.QueryCanceled) and cancel.cancelled:
            raise OperationCancelled(f"vector store call {what} was cancelled") from exc
        if isinstance(exc, psycopg.OperationalError) and not isinstance(
            exc, psycopg.errors.QueryCanceled
        ):
            self._conn = None  # broken: reconnect on the next call
        translated = translate(exc, f"vector store {what}")
        if translated is exc:
            raise exc
        raise translated from exc


async def _transaction(conn: psycopg.AsyncConnection, work: Work[T], timeout_ms: int) -> T:
    async with conn.transaction():
        await conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_ms),))
        return await work(conn)
