"""The SQLite tape as a store: persistence, schema and projection versions, error
translation, and cancellation reaching a running statement."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import apsw
import pytest

from memory_adapters.tapes import SqliteTape
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    OperationCancelled,
    StoreError,
    StoreQuarantined,
    ValidationError,
)
from memory_core.ports.tape import Anchor, AnchorKind


def test_a_reopened_store_keeps_messages_edits_anchors_and_projection(tmp_path: Path, call) -> None:
    """R-STORE-1 (tape side): everything survives a close and reopen."""
    path = tmp_path / "tape.sqlite3"
    with SqliteTape(path) as tape:
        first = tape.append_message("s", "user", "draft")
        tape.replace("s", first.id, "final")
        call(tape.append, Anchor(kind=AnchorKind.VIEW_ASSEMBLED, agent_id="A", session_id="s",
                                 message_id=first.id, payload={"k": [1]}))  # fmt: skip
    with SqliteTape(path) as reopened:
        (entry,) = call(reopened.get_by_session, "s")
        assert (entry.id, entry.content) == (first.id, "final")
        found = call(reopened.read_current_range, "s", 0)
        assert found.current and list(found.entries) == [entry]
        assert call(reopened.list_memory_view_manifests_by_agent, "A")[0].payload == {"k": [1]}


def test_a_projection_of_an_older_version_is_stale_until_rebuilt(tmp_path: Path, call) -> None:
    """R-WRITE-8: a projection built by another projection version never counts as current."""
    path = tmp_path / "tape.sqlite3"
    with SqliteTape(path) as tape:
        tape.append_message("s", "user", "hello")
        raw = apsw.Connection(str(path))
        raw.execute("UPDATE tape_ingestion_projection_meta SET projection_version = 0")
        raw.close()
        assert not call(tape.read_current_range, "s", 0).current
        call(tape.rebuild_projection, "s")
        assert call(tape.read_current_range, "s", 0).current


def test_a_version_1_file_is_upgraded_with_created_at_unknown(tmp_path: Path, call) -> None:
    """R-STORE-1: schema version 2 adds the nullable `created_at` in place."""
    path = tmp_path / "tape.sqlite3"
    with SqliteTape(path) as tape:
        tape.append_message("s", "user", "before")
    raw = apsw.Connection(str(path))  # rewind the file to version 1: no created_at columns
    raw.execute(
        "ALTER TABLE tape_entry DROP COLUMN created_at;"
        " ALTER TABLE tape_ingestion_projection DROP COLUMN created_at;"
        " PRAGMA user_version=1"
    )
    raw.close()
    with SqliteTape(path) as tape:
        said = datetime(2025, 6, 2, tzinfo=UTC)
        tape.append_message("s", "user", "after", created_at=said)
        found = call(tape.read_current_range, "s", 0)
        assert found.current and [e.created_at for e in found.entries] == [None, said]
    raw = apsw.Connection(str(path))
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
    raw.close()


def test_a_newer_schema_is_refused_rather_than_guessed(tmp_path: Path) -> None:
    """R-STORE-1: versioned schema; a file from a newer adapter is not touched."""
    path = tmp_path / "tape.sqlite3"
    raw = apsw.Connection(str(path))
    raw.execute("PRAGMA user_version=99")
    raw.close()
    with pytest.raises(StoreError, match="newer"):
        SqliteTape(path)


def test_a_file_that_is_not_a_database_is_quarantined(tmp_path: Path) -> None:
    """R-VEC-3 (spirit): library errors become typed domain errors, never apsw ones."""
    path = tmp_path / "tape.sqlite3"
    path.write_bytes(b"this is not a database file" * 100)
    with pytest.raises(StoreQuarantined):
        SqliteTape(path)


def test_an_unknown_synchronous_mode_is_refused_by_name(tmp_path: Path) -> None:
    """R-DOM-4: the option is checked before it reaches a PRAGMA."""
    with pytest.raises(ValidationError) as excinfo:
        SqliteTape(tmp_path / "tape.sqlite3", synchronous="FULL; DROP TABLE x")
    assert excinfo.value.field == "synchronous"


def test_cancelling_during_a_read_interrupts_the_statement(tmp_path: Path) -> None:
    """R-ARCH-2: a token fired while SQLite runs interrupts it (OperationCancelled)."""
    with SqliteTape(tmp_path / "tape.sqlite3") as tape:
        for index in range(20):
            tape.append_message("s", "user", f"message {index}")
        cancel = CancellationToken()
        steps: list[int] = []

        def cancel_midway() -> bool:
            steps.append(1)
            if len(steps) == 20:
                cancel.cancel("user pressed stop")
            return False

        tape._conn.set_progress_handler(cancel_midway, 1)  # to land inside the statement
        deadline = Deadline.after(ManualClock(), 30.0)
        with pytest.raises(OperationCancelled, match="user pressed stop"):
            asyncio.run(tape.get_by_session("s", deadline=deadline, cancel=cancel))
        tape._conn.set_progress_handler(None)
        assert len(asyncio.run(
            tape.get_by_session("s", deadline=deadline, cancel=CancellationToken())
        )) == 20  # fmt: skip
