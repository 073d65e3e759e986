"""`SqliteTape`: a host-style tape store in SQLite (apsw) with an ingestion projection.

The tape is an append-only log of messages, replacements and retractions (`tape_entry`);
anchors live in `tape_anchor`. The projection (`tape_ingestion_projection` + `_meta`) is
updated in the same transaction as each host write while it is current, so a terminal turn
reads only the range after its cursor; a writer that does not maintain it (`project=False`,
or another program writing `tape_entry`) leaves it stale until `rebuild_projection`.
`read_current_range` compares both heads and reads the range in one statement (R-WRITE-8).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

import apsw

from memory_adapters.tapes import sqlite_schema as sql
from memory_adapters.tapes.common import (
    check_cursor,
    check_entry_ids,
    check_limit,
    check_session_id,
    encode_payload,
    enter,
)
from memory_adapters.tapes.sqlite_connection import (
    interrupt_on,
    open_tape_connection,
    translate_errors,
)
from memory_adapters.tapes.sqlite_rows import (
    created_at_column,
    created_at_value,
    effective_entries,
    project_upsert,
    row_entry,
    scalar,
    scalar_int,
    set_projection_head,
)
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import NotFound, ValidationError
from memory_core.ports.tape import (
    Anchor,
    EntryKind,
    EntryRole,
    EntryStatus,
    ManifestRecord,
    MessageSourceSpan,
    ProjectionRange,
    SourceMessage,
    TapeEntry,
)
from memory_core.services.write.fork_cursor import fork_selection

__all__ = ["SqliteTape"]


class SqliteTape:
    """All four tape ports plus `append_message`, `replace`, `retract` and `fork`.

    One apsw connection per object (WAL, so readers never block the writer); several
    objects — in one process or many — may share a file. Writers take the lock up front.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = 5_000,
        synchronous: str = "FULL",
    ) -> None:
        self._path = Path(path)
        self._lock = threading.RLock()
        self._conn = open_tape_connection(
            self._path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous
        )

    @property
    def path(self) -> Path:
        return self._path

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SqliteTape:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- host writes ---------------------------------------------------------------------
    def append_message(
        self,
        session_id: str,
        role: EntryRole | str,
        content: str,
        *,
        status: EntryStatus | str = EntryStatus.SENT,
        kind: EntryKind | str = EntryKind.MESSAGE,
        message_id: str | None = None,
        created_at: datetime | None = None,
        project: bool = True,
    ) -> TapeEntry:
        """Append a message with the next order_seq of its session and return it.
        `created_at` (aware) is when the message was said, if the host knows it.
        `project=False` leaves the projection stale, as a writer unaware of it would."""
        check_session_id(session_id)
        with self._write() as conn:
            order_seq = 1 + scalar_int(
                conn,
                "SELECT COALESCE(MAX(order_seq), 0) FROM tape_entry"
                " WHERE session_id = ? AND type = 'message'",
                (session_id,),
            )
            entry = TapeEntry(
                id=message_id if message_id is not None else self._fresh_message_id(conn),
                session_id=session_id,
                order_seq=order_seq,
                role=role,
                content=content,
                status=status,
                kind=kind,
                created_at=created_at,
            )
            if scalar(conn, "SELECT COUNT(*) FROM tape_entry WHERE message_id = ?", (entry.id,)):
                raise ValidationError("message_id", "is already used on this tape")
            in_step = project and self._in_step(conn, session_id)
            entry_id = self._insert_message(conn, entry)
            if in_step:
                project_upsert(conn, entry, entry_id)
                set_projection_head(conn, session_id, entry_id)
            return entry

    def replace(
        self,
        session_id: str,
        message_id: str,
        content: str,
        *,
        status: EntryStatus | str | None = None,
        project: bool = True,
    ) -> TapeEntry:
        """Edit an effective message in place (same id and order_seq); returns it as now seen."""
        if not isinstance(content, str):
            raise ValidationError("content", "must be a string")
        with self._write() as conn:
            current = self._live_message(conn, session_id, message_id)
            edited = TapeEntry(
                id=current.id,
                session_id=session_id,
                order_seq=current.order_seq,
                role=current.role,
                content=content,
                status=current.status if status is None else status,
                kind=current.kind,
                created_at=current.created_at,
            )
            in_step = project and self._in_step(conn, session_id)
            conn.execute(
                "INSERT INTO tape_entry (session_id, type, message_id, content, status)"
                " VALUES (?, 'replacement', ?, ?, ?)",
                (session_id, message_id, edited.content, edited.status.value),
            )
            if in_step:
                conn.execute(
                    "UPDATE tape_ingestion_projection SET content = ?, status = ?"
                    " WHERE session_id = ? AND message_id = ?",
                    (edited.content, edited.status.value, session_id, message_id),
                )
                set_projection_head(conn, session_id, conn.last_insert_rowid())
            return edited

    def retract(self, session_id: str, message_id: str, *, project: bool = True) -> None:
        """Remove a message from the effective view; its order_seq is not reused."""
        with self._write() as conn:
            self._live_message(conn, session_id, message_id)
            in_step = project and self._in_step(conn, session_id)
            conn.execute(
                "INSERT INTO tape_entry (session_id, type, message_id) VALUES (?, 'retraction', ?)",
                (session_id, message_id),
            )
            if in_step:
                conn.execute(
                    "DELETE FROM tape_ingestion_projection WHERE session_id = ? AND message_id = ?",
                    (session_id, message_id),
                )
                set_projection_head(conn, session_id, conn.last_insert_rowid())

    def fork(
        self, source_session_id: str, target_session_id: str, up_to_order_seq: int
    ) -> tuple[TapeEntry, ...]:
        """Clone the source's sent messages up to `up_to_order_seq` into the empty target,
        renumbered 1..n, in one transaction (R-WRITE-3)."""
        check_session_id(source_session_id, "source_session_id")
        check_session_id(target_session_id, "target_session_id")
        if source_session_id == target_session_id:
            raise ValidationError("target_session_id", "must differ from the source session")
        with self._write() as conn:
            if scalar(
                conn, "SELECT COUNT(*) FROM tape_entry WHERE session_id = ?", (target_session_id,)
            ):
                raise ValidationError("target_session_id", "already has messages")
            selected = fork_selection(effective_entries(conn, source_session_id), up_to_order_seq)
            clones: list[TapeEntry] = []
            last_entry_id = 0
            for position, source in enumerate(selected, start=1):
                clone = TapeEntry(
                    id=self._fresh_message_id(conn),
                    session_id=target_session_id,
                    order_seq=position,
                    role=source.role,
                    content=source.content,
                    status=source.status,
                    kind=source.kind,
                    created_at=source.created_at,
                )
                last_entry_id = self._insert_message(conn, clone)
                project_upsert(conn, clone, last_entry_id)
                clones.append(clone)
            if clones:
                set_projection_head(conn, target_session_id, last_entry_id)
            return tuple(clones)

    # --- TapeRawEntryReader --------------------------------------------------------------
    async def get_by_session(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[TapeEntry]:
        enter("tape.get_by_session", deadline, cancel)
        check_session_id(session_id)
        with self._read(cancel) as conn:
            return effective_entries(conn, session_id)

    # --- TapeAnchorWriter ----------------------------------------------------------------
    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        enter("tape.append", deadline, cancel)
        if not isinstance(anchor, Anchor):
            raise ValidationError("anchor", "must be an Anchor")
        payload = encode_payload(anchor.payload)
        with self._write(cancel) as conn:
            conn.execute(
                sql.ANCHOR_INSERT,
                {
                    "session": anchor.session_id,
                    "kind": anchor.kind.value,
                    "agent": anchor.agent_id,
                    "message": anchor.message_id,
                    "payload": payload,
                },
            )
            return f"a-{conn.last_insert_rowid()}"

    # --- TapeInspectionReader ------------------------------------------------------------
    async def get_effective_message_source_span(
        self,
        session_id: str,
        entry_ids: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> MessageSourceSpan | None:
        enter("tape.get_effective_message_source_span", deadline, cancel)
        check_session_id(session_id)
        ids = check_entry_ids(entry_ids)
        with self._read(cancel) as conn:
            rows = conn.execute(
                sql.EFFECTIVE_BY_IDS, {"session": session_id, "ids": json.dumps(list(ids))}
            ).fetchall()
        if not rows:
            return None
        return MessageSourceSpan(
            session_id=session_id,
            messages=tuple(
                SourceMessage(
                    message_id=row[0], order_seq=row[1], role=EntryRole(row[2]), content=row[3]
                )
                for row in rows
            ),
        )

    async def list_memory_view_manifests_by_agent(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        message_id: str | None = None,
        limit: int = 50,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[ManifestRecord]:
        enter("tape.list_memory_view_manifests_by_agent", deadline, cancel)
        check_session_id(agent_id, "agent_id")
        params = {
            "agent": agent_id,
            "session": session_id,
            "message": message_id,
            "limit": check_limit(limit),
        }
        with self._read(cancel) as conn:
            rows = conn.execute(sql.MANIFESTS, params).fetchall()
        return tuple(
            ManifestRecord(
                anchor_id=f"a-{row[0]}",
                session_id=row[1],
                message_id=row[2],
                payload=json.loads(row[3]),
            )
            for row in rows
        )

    # --- IngestionProjection -------------------------------------------------------------
    async def read_current_range(
        self,
        session_id: str,
        after_order_seq: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> ProjectionRange:
        enter("tape.read_current_range", deadline, cancel)
        check_session_id(session_id)
        params = {"session": session_id, "after": check_cursor(after_order_seq)}
        with self._read(cancel) as conn:
            rows = conn.execute(sql.READ_CURRENT_RANGE, params).fetchall()
        tape_head, projection_head = rows[0][0], rows[0][1]
        entries = tuple(
            TapeEntry(
                id=row[2],
                session_id=session_id,
                order_seq=row[3],
                role=row[4],
                content=row[5],
                status=row[6],
                kind=row[7],
                created_at=created_at_value(row[8]),
            )
            for row in rows
            if row[2] is not None
        )
        return ProjectionRange(
            current=tape_head == projection_head,
            entries=entries,
            tape_head=None if tape_head is None else str(tape_head),
            projection_head=None if projection_head is None else str(projection_head),
        )

    async def rebuild_projection(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        enter("tape.rebuild_projection", deadline, cancel)
        check_session_id(session_id)
        # One write transaction: the rows and the head recorded come from the same tape.
        with self._write(cancel) as conn:
            conn.execute(
                "DELETE FROM tape_ingestion_projection WHERE session_id = ?", (session_id,)
            )
            conn.execute(
                "INSERT INTO tape_ingestion_projection"
                " (session_id, message_id, order_seq, entry_id, role, content, status, kind,"
                " created_at)"
                " SELECT :session, message_id, order_seq, entry_id, role, content, status, kind,"
                f" created_at FROM ({sql.EFFECTIVE})",
                {"session": session_id},
            )
            head = scalar(conn, sql.TAPE_HEAD, {"session": session_id})
            if head is None:
                conn.execute(
                    "DELETE FROM tape_ingestion_projection_meta WHERE session_id = ?",
                    (session_id,),
                )
            else:
                set_projection_head(conn, session_id, head)

    # --- helpers -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _read(self, cancel: CancellationToken | None = None) -> Iterator[apsw.Connection]:
        with self._lock, interrupt_on(cancel, self._conn), translate_errors(cancel):
            yield self._conn

    @contextlib.contextmanager
    def _write(self, cancel: CancellationToken | None = None) -> Iterator[apsw.Connection]:
        """BEGIN IMMEDIATE … COMMIT; any exception rolls the whole write back."""
        with self._lock, interrupt_on(cancel, self._conn), translate_errors(cancel):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _in_step(self, conn: apsw.Connection, session_id: str) -> bool:
        """Whether the projection is current, so a write may update it incrementally."""
        tape_head, projection_head = conn.execute(sql.HEADS, {"session": session_id}).fetchone()
        return tape_head == projection_head

    def _fresh_message_id(self, conn: apsw.Connection) -> str:
        # AUTOINCREMENT: the next entry id is one past the sequence; used as the id's stem.
        stem = 1 + scalar_int(
            conn, "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'tape_entry'", ()
        )
        candidate, suffix = f"m-{stem}", 1
        while scalar(conn, "SELECT COUNT(*) FROM tape_entry WHERE message_id = ?", (candidate,)):
            candidate, suffix = f"m-{stem}.{suffix}", suffix + 1
        return candidate

    def _insert_message(self, conn: apsw.Connection, entry: TapeEntry) -> int:
        conn.execute(
            "INSERT INTO tape_entry"
            " (session_id, type, message_id, order_seq, role, content, status, kind, created_at)"
            " VALUES (?, 'message', ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.session_id,
                entry.id,
                entry.order_seq,
                entry.role.value,
                entry.content,
                entry.status.value,
                entry.kind.value,
                created_at_column(entry.created_at),
            ),
        )
        return conn.last_insert_rowid()

    def _live_message(self, conn: apsw.Connection, session_id: str, message_id: str) -> TapeEntry:
        check_session_id(session_id)
        rows = conn.execute(
            sql.EFFECTIVE_BY_IDS, {"session": session_id, "ids": json.dumps([message_id])}
        ).fetchall()
        if not rows:
            raise NotFound(f"no effective message {message_id!r} in session {session_id!r}")
        return row_entry(session_id, rows[0])
