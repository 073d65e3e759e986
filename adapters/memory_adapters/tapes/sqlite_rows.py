"""Rows of the SQLite tape to and from domain values, and the projection's small writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import apsw

from memory_adapters.tapes import sqlite_schema as sql
from memory_core.ports.tape import TapeEntry

__all__ = [
    "created_at_column",
    "created_at_value",
    "effective_entries",
    "project_upsert",
    "row_entry",
    "scalar",
    "scalar_int",
    "set_projection_head",
]


def effective_entries(conn: apsw.Connection, session_id: str) -> tuple[TapeEntry, ...]:
    rows = conn.execute(sql.EFFECTIVE, {"session": session_id}).fetchall()
    return tuple(row_entry(session_id, row) for row in rows)


def row_entry(session_id: str, row: Sequence[object]) -> TapeEntry:
    """(message_id, order_seq, role, content, status, kind, entry_id, created_at)
    -> TapeEntry (validated)."""
    message_id, order_seq, role, content, status, kind = row[:6]
    return TapeEntry(
        id=message_id,  # type: ignore[arg-type]
        session_id=session_id,
        order_seq=order_seq,  # type: ignore[arg-type]
        role=role,  # type: ignore[arg-type]
        content=content,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        kind=kind,  # type: ignore[arg-type]
        created_at=created_at_value(row[7]),
    )


def created_at_column(value: datetime | None) -> str | None:
    """A TapeEntry's `created_at` (already UTC) as stored: ISO-8601, or NULL."""
    return None if value is None else value.isoformat()


def created_at_value(value: object) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)  # type: ignore[arg-type]


def project_upsert(conn: apsw.Connection, entry: TapeEntry, entry_id: int) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO tape_ingestion_projection"
        " (session_id, message_id, order_seq, entry_id, role, content, status, kind, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.session_id,
            entry.id,
            entry.order_seq,
            entry_id,
            entry.role.value,
            entry.content,
            entry.status.value,
            entry.kind.value,
            created_at_column(entry.created_at),
        ),
    )


def set_projection_head(conn: apsw.Connection, session_id: str, entry_id: int) -> None:
    conn.execute(
        "INSERT INTO tape_ingestion_projection_meta (session_id, projection_version, max_entry_id)"
        " VALUES (?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
        " projection_version = excluded.projection_version, max_entry_id = excluded.max_entry_id",
        (session_id, sql.PROJECTION_VERSION, entry_id),
    )


def scalar(conn: apsw.Connection, statement: str, params: object) -> object:
    row = conn.execute(statement, params).fetchone()
    return None if row is None else row[0]


def scalar_int(conn: apsw.Connection, statement: str, params: object) -> int:
    value = scalar(conn, statement, params)
    assert isinstance(value, int), statement
    return value
