"""The SQLite tape's connection: pragmas, schema migration, interruption on cancel, and the
translation of apsw exceptions into the domain's errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import apsw

from memory_adapters.tapes import sqlite_schema as sql
from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.errors import (
    AgentMemoryError,
    OperationCancelled,
    StoreError,
    StoreQuarantined,
    ValidationError,
)

__all__ = ["interrupt_on", "open_tape_connection", "translate_errors"]

_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")


def open_tape_connection(path: Path, *, busy_timeout_ms: int, synchronous: str) -> apsw.Connection:
    """Open (creating if needed) and migrate the tape database at `path`."""
    if synchronous.upper() not in _SYNCHRONOUS:
        raise ValidationError("synchronous", f"must be one of {', '.join(_SYNCHRONOUS)}")
    with translate_errors():
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = apsw.Connection(str(path))
        try:
            conn.set_busy_timeout(busy_timeout_ms)
            # WAL: readers keep their snapshot while a writer appends (R-WRITE-8 relies on it).
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
            _migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn


def _migrate(conn: apsw.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == sql.SCHEMA_VERSION:
        return
    if version > sql.SCHEMA_VERSION:
        raise StoreError(f"tape schema version {version} is newer than this adapter")
    with conn:
        if version == 0:
            conn.execute(sql.SCHEMA)
        else:
            for step in range(version, sql.SCHEMA_VERSION):
                conn.execute(sql.MIGRATIONS[step])
        conn.execute(f"PRAGMA user_version={sql.SCHEMA_VERSION}")


@contextlib.contextmanager
def interrupt_on(cancel: CancellationToken | None, conn: apsw.Connection) -> Iterator[None]:
    """A cancellation fired from another thread interrupts the running statement."""
    if cancel is None:
        yield
        return
    unregister = cancel.on_cancel(conn.interrupt)
    try:
        yield
    finally:
        unregister()


@contextlib.contextmanager
def translate_errors(cancel: CancellationToken | None = None) -> Iterator[None]:
    """apsw exceptions become domain errors; messages carry no message content."""
    try:
        yield
    except AgentMemoryError:
        raise
    except apsw.InterruptError as exc:
        raise OperationCancelled(cancel.reason if cancel else "interrupted") from exc
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        raise StoreQuarantined(f"tape database unusable: {type(exc).__name__}") from exc
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise StoreError("tape database busy beyond the busy timeout") from exc
    except apsw.Error as exc:
        raise StoreError(f"tape database failure: {type(exc).__name__}") from exc
    except OSError as exc:
        raise StoreError(f"tape database path unusable: {type(exc).__name__}") from exc
