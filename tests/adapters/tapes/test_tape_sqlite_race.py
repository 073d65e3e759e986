"""R-WRITE-8: the SQLite tape decides "current" from both heads in one statement.

The race: a projection lagging its tape is caught up by a projector while the host appends
one more message without projecting it. A reader that fetches the tape head and the
projection head in two statements, with that race between them, pairs heads from two
moments — and at neither moment were they equal — yet calls the range current and would
let the cursor advance over it. The one-statement read sees one snapshot, whenever the race
lands, and never does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from memory_adapters.tapes import SqliteTape
from memory_adapters.tapes.sqlite_schema import TAPE_HEAD
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline

SESSION = "s"


def _naive_read_current_range(
    conn: apsw.Connection, after: int, between: Callable[[], None]
) -> tuple[bool, list[str]]:
    """The split variant the seed forbids: two statements, two snapshots."""
    tape_head = conn.execute(TAPE_HEAD, {"session": SESSION}).fetchone()[0]
    between()
    projection_head = conn.execute(
        "SELECT max_entry_id FROM tape_ingestion_projection_meta WHERE session_id = ?",
        (SESSION,),
    ).fetchone()[0]
    rows = conn.execute(
        "SELECT message_id FROM tape_ingestion_projection"
        " WHERE session_id = ? AND order_seq > ? ORDER BY order_seq",
        (SESSION, after),
    ).fetchall()
    return tape_head == projection_head, [row[0] for row in rows]


def _deadline() -> Deadline:
    return Deadline.after(ManualClock(), 30.0)


def _lagging_tape(path: Path) -> tuple[SqliteTape, SqliteTape]:
    """Four projected messages, then one the projection missed: tape head 5, projection 4."""
    tape, other_writer = SqliteTape(path), SqliteTape(path)
    for index in range(4):
        tape.append_message(SESSION, "user", f"message {index}")
    other_writer.append_message(SESSION, "assistant", "missed", project=False)
    return tape, other_writer


def _race(other_writer: SqliteTape) -> Callable[[], None]:
    """Projector catches up to 5, then the host appends 6 unprojected — in another thread,
    as another process would, with its own event loop and connection."""

    def work() -> None:
        rebuild = other_writer.rebuild_projection
        asyncio.run(rebuild(SESSION, deadline=_deadline(), cancel=CancellationToken()))
        other_writer.append_message(SESSION, "user", "raced", project=False)

    def run_once() -> None:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()

    return run_once


def _read(tape: SqliteTape):
    return asyncio.run(
        tape.read_current_range(SESSION, 0, deadline=_deadline(), cancel=CancellationToken())
    )


def test_a_split_read_reports_a_false_current_when_an_append_races_between_its_reads(
    tmp_path: Path,
) -> None:
    """R-WRITE-8: the negative control — this is the failure one statement prevents."""
    path = tmp_path / "tape.sqlite3"
    tape, other_writer = _lagging_tape(path)
    assert not _read(tape).current  # before the race: tape 5, projection 4
    naive = apsw.Connection(str(path))

    current, rows = _naive_read_current_range(naive, 0, _race(other_writer))

    after = _read(tape)
    assert not after.current  # after the race: tape 6, projection 5
    assert (after.tape_head, after.projection_head) == ("6", "5")
    assert current, "the split read pairs tape head 5 with projection head 5"
    assert "m-6" not in rows  # ...and would advance the cursor over a range missing m-6
    naive.close()
    tape.close()
    other_writer.close()


@pytest.mark.parametrize("fire_at", [1, 2, 4, 8, 16, 32, 64, 128])
def test_the_one_statement_read_is_not_current_when_the_append_races_inside_it(
    tmp_path: Path, fire_at: int
) -> None:
    """R-WRITE-8: the same race, fired at many points inside the read (SQLite's progress
    handler runs every VM instruction), never produces "current": the read is one
    statement, so one snapshot. A split read fails this for the points between its
    statements' snapshots."""
    tape, other_writer = _lagging_tape(tmp_path / "tape.sqlite3")
    race = _race(other_writer)
    steps: list[int] = []

    def race_once() -> bool:
        steps.append(1)
        if len(steps) == fire_at:
            race()
        return False  # False: keep running the statement

    # The connection is private; only this test reaches for it, to land the race mid-read.
    tape._conn.set_progress_handler(race_once, 1)
    try:
        during = _read(tape)
    finally:
        tape._conn.set_progress_handler(None)

    assert len(steps) >= fire_at, "the race ran while read_current_range was executing"
    assert not during.current and list(during.entries) == []
    assert during.tape_head != during.projection_head
    after = _read(tape)
    assert (after.current, after.tape_head, after.projection_head) == (False, "6", "5")
    tape.close()
    other_writer.close()
