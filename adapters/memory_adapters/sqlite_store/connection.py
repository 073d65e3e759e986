"""One apsw connection per store: pragmas, the owner-token function, how long a call waits
for another connection's lock, transactions, and the translation of apsw exceptions into the
domain's error types."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw

from memory_adapters.sqlite_store.schema import (
    CLEAR_GUARD_MESSAGE,
    SCOPE_ERROR_MESSAGE,
    TEMPORAL_ERROR_MESSAGE,
)
from memory_core.domain.errors import (
    AgentMemoryError,
    ClearInProgress,
    ScopeError,
    StoreError,
    StoreQuarantined,
    TemporalError,
)

__all__ = [
    "OWNER_TOKEN_FUNCTION",
    "LockWait",
    "fts_owner_token",
    "open_connection",
    "read_transaction",
    "translate_errors",
    "write_transaction",
]

_log = logging.getLogger(__name__)

OWNER_TOKEN_FUNCTION = "agent_memory_fts_owner"
# Three code points from the CJK Unified Ideographs block: one trigram (so the owner
# predicate is a single index term under the trigram tokenizer, and a single token under
# unicode61) carrying ~43 bits of the hash. Collisions only cost speed: every hit is
# joined back to the real agent_id before LIMIT.
_TOKEN_BASE = 0x4E00
_TOKEN_RADIX = 0x9FFF - 0x4E00 + 1
_TOKEN_DOMAIN = b"agent-memory.fts-owner.v1\0"


@functools.lru_cache(maxsize=4096)
def fts_owner_token(agent_id: str) -> str:
    """The FTS `owner` column value for an agent: a hash, never the id itself."""
    value = int.from_bytes(hashlib.sha256(_TOKEN_DOMAIN + agent_id.encode()).digest()[:8], "big")
    chars = []
    for _ in range(3):
        value, digit = divmod(value, _TOKEN_RADIX)
        chars.append(chr(_TOKEN_BASE + digit))
    return "".join(chars)


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LockWait:
    """The busy handler: how long a call waits for a lock another connection holds.

    SQLite calls run inline on the event loop (`InlineCalls`), so a call waiting there for
    another process's write lock (a CLI, a backup's checkpoint) holds every turn of the
    process with it; SQLite's own busy timeout (5 s) is longer than a turn's deadline
    (R-READ-1, R-HOST-1). So on a thread running an event loop a call waits at most
    `loop_timeout_ms`, and after one such call gave up, the next ones on the loop make a
    single attempt until `backoff_s` has passed: twenty sessions' writes behind one
    foreign lock then cost the loop one short wait, not twenty. The backoff is long (4 s)
    because the wait is dead time for every session of the process: under a holder taking
    the lock 8 s of every 12, a 1 s backoff put the loop to sleep for a tenth of the run.
    A single attempt still succeeds whenever the lock is free, so what the backoff costs
    is only a write refused instead of waiting out another brief writer. The call that gives up
    fails with StoreError; every caller on the loop treats that as weather (ingestion and
    embedding retry on a later turn, access counts are best effort, a scrub stays
    pending). Off the loop — a thread, a script — a call waits the whole `timeout_ms`.
    """

    def __init__(
        self,
        *,
        timeout_ms: int,
        loop_timeout_ms: int,
        backoff_s: float = 4.0,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        on_loop: Callable[[], bool] = _on_event_loop,
    ) -> None:
        self.timeout_s = timeout_ms / 1000
        self.loop_timeout_s = loop_timeout_ms / 1000
        self._backoff_s = backoff_s
        self._monotonic = monotonic
        self._sleep = sleep
        self._on_loop = on_loop
        self._started = 0.0
        self._quiet_until = float("-inf")
        self._no_wait = False

    def __call__(self, prior_calls: int) -> bool:
        """True: try again after a short sleep; False: give up (SQLITE_BUSY)."""
        now = self._monotonic()
        if prior_calls == 0:
            self._started = now
        on_loop = self._on_loop()
        if self._no_wait or (on_loop and now < self._quiet_until):
            return False
        remaining = (self.loop_timeout_s if on_loop else self.timeout_s) - (now - self._started)
        if remaining <= 0:
            if on_loop:
                self._quiet_until = now + self._backoff_s
            return False
        # SQLite's own schedule, roughly: 1 ms doubling up to 25 ms.
        self._sleep(min(0.001 * 2 ** min(prior_calls, 5), 0.025, remaining))
        return True

    @contextlib.contextmanager
    def single_attempt(self) -> Iterator[None]:
        """Calls inside never wait (a scrub retried after a write must not cost it)."""
        self._no_wait = True
        try:
            yield
        finally:
            self._no_wait = False


def open_connection(
    path: Path, *, lock_wait: LockWait, hardened: bool, synchronous: str, mmap_bytes: int
) -> apsw.Connection:
    """Open `path` with the store's per-connection settings (CONVENTIONS, Storage).

    `mmap_bytes` > 0 reads the file's first that many bytes through a memory map (0: none):
    a page is then the OS page cache's own, not a copy made by a `read` call into SQLite's
    2 MiB page cache, which a turn's random row and index reads over a large store kept
    missing (issue 15). Writes still go through SQLite's pager, so `secure_delete` is unchanged."""
    with translate_errors():
        conn = apsw.Connection(str(path))
        conn.set_busy_handler(lock_wait)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchall()[0][0]
        if str(mode).lower() != "wal":
            raise StoreError(f"journal_mode WAL refused (got {mode})")
        conn.execute("PRAGMA foreign_keys=ON")
        # Freed pages and cells are zeroed, so deleted text is not left in the file
        # (R-PRIV-3); turned off only by the forensic test's negative control.
        conn.execute(f"PRAGMA secure_delete={'ON' if hardened else 'OFF'}")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.execute(f"PRAGMA mmap_size={int(mmap_bytes)}")
        conn.create_scalar_function(
            OWNER_TOKEN_FUNCTION,
            fts_owner_token,
            1,
            deterministic=True,
            flags=apsw.SQLITE_INNOCUOUS,  # callable from triggers even with trusted_schema=OFF
        )
        return conn


_CONSTRAINT_TRANSLATIONS = (
    (CLEAR_GUARD_MESSAGE, lambda: ClearInProgress("a clear job is pending for this agent")),
    (TEMPORAL_ERROR_MESSAGE, lambda: TemporalError("temporal", "violates stored invariants")),
    (SCOPE_ERROR_MESSAGE, lambda: ScopeError("scope", "violates stored invariants")),
)


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Map apsw exceptions to domain errors; messages carry no row content."""
    try:
        yield
    except AgentMemoryError:
        raise
    except apsw.ConstraintError as exc:
        text = str(exc)
        for needle, make in _CONSTRAINT_TRANSLATIONS:
            if needle in text:
                raise make() from exc
        raise StoreError(f"constraint violated: {type(exc).__name__}") from exc
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        _log.error("sqlite store is corrupt: %s", type(exc).__name__)
        raise StoreQuarantined(f"database file unusable: {type(exc).__name__}") from exc
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise StoreError("database busy: another connection holds its lock") from exc
    except apsw.Error as exc:
        raise StoreError(f"sqlite failure: {type(exc).__name__}") from exc


@contextlib.contextmanager
def write_transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """BEGIN IMMEDIATE … COMMIT: writers take the lock up front, so a read-then-write never
    fails half-way on a lock upgrade; any exception rolls back the whole unit."""
    with translate_errors():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")


@contextlib.contextmanager
def read_transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """A consistent snapshot for reads that take more than one statement."""
    with translate_errors():
        conn.execute("BEGIN DEFERRED")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")
