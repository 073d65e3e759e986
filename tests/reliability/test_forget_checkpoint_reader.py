"""A reader process must not make forgetting silently non-physical (R-PRIV-3, R-FORGET-1).

Another process holding a SQLite read transaction (a CLI `list`, a backup) keeps the WAL
checkpoint from finishing. Its result used to be ignored: the deleted plaintext stayed in
`memory.sqlite3` and nothing remembered that a scrub was owed. Now the store reads the
result, keeps a durable content-free mark, finishes the scrub at the next write and on
open, and doctor reports it meanwhile.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

from forget_world import open_world

from memory_adapters.sqlite_store.store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.services.memory.diagnostics import CheckStatus

A = "agent-a"
SECRET_FACT = "Zebra-7 quartz lighthouse is the family codeword"
NEEDLE = b"quartz lighthouse"

_READER = textwrap.dedent(
    """
    import sys, apsw
    conn = apsw.Connection(sys.argv[1], flags=apsw.SQLITE_OPEN_READONLY)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM agent_memory").fetchall()
    print("holding", flush=True)
    sys.stdin.readline()
    conn.execute("COMMIT")
    conn.close()
    """
)


def _files(data: Path) -> list[Path]:
    return [path for path in data.rglob("memory.sqlite3*") if path.is_file()]


def _leaks(data: Path) -> list[str]:
    return [path.name for path in _files(data) if NEEDLE in path.read_bytes()]


def _start_reader(db: Path) -> subprocess.Popen[str]:
    reader = subprocess.Popen(
        [sys.executable, "-c", _READER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None
    assert reader.stdout.readline().strip() == "holding"
    return reader


def _stop(reader: subprocess.Popen[str]) -> None:
    assert reader.stdin is not None
    reader.stdin.write("\n")
    reader.stdin.flush()
    assert reader.wait(timeout=30) == 0


def test_a_reader_process_leaves_a_scrub_pending_mark_that_doctor_reports_and_a_write_finishes(
    tmp_path: Path,
) -> None:
    """R-PRIV-3: blocked checkpoint → durable mark + doctor WARN; the reader gone, the
    next write finishes the scrub: no file holds the deleted text and the mark is gone."""
    data = tmp_path / "data"

    async def go() -> None:
        memory = open_world(data)
        stored = await memory.remember(A, SECRET_FACT, user_add=True)
        assert stored.claim_id is not None
        await memory.aclose()  # the fact now sits in the main file, the WAL is empty
        (db,) = [path for path in _files(data) if path.name == "memory.sqlite3"]
        assert NEEDLE in db.read_bytes()

        memory = open_world(data)
        reader = _start_reader(db)
        try:
            await memory.delete(A, stored.claim_id)
            mark = db.with_name(db.name + ".scrub-pending")
            assert mark.exists() and mark.read_bytes() == b""  # durable and content-free
            report = await memory.diagnose()
            (scrub,) = [check for check in report.checks if check.name == "forensic scrub"]
            assert scrub.status is CheckStatus.WARN
            assert SECRET_FACT not in scrub.detail
        finally:
            _stop(reader)
        await memory.remember(A, "An unrelated later fact", user_add=True)  # next opportunity
        assert not mark.exists()
        assert _leaks(data) == []
        report = await memory.diagnose()
        (scrub,) = [check for check in report.checks if check.name == "forensic scrub"]
        assert scrub.status is CheckStatus.OK
        await memory.aclose()

    asyncio.run(go())


def test_a_pending_scrub_is_finished_on_open(tmp_path: Path) -> None:
    """R-PRIV-3: the mark outlives the process (no clean close here, as after a SIGKILL);
    the next open finishes the scrub before serving."""
    db = tmp_path / "memory.sqlite3"
    policy, clock = PatternSecretPolicy(), ManualClock()
    with ApswClaimStore(db, secret_policy=policy, clock=clock) as store:
        outcome = store.insert(
            ClaimDraft(agent_id=A, kind="semantic", content=SECRET_FACT),
            origin=WriteOrigin.USER_ADD,
            now=clock.now(),
        )
        assert outcome.claim is not None
    first = ApswClaimStore(db, secret_policy=policy, clock=clock, busy_timeout_ms=50)
    reader = _start_reader(db)
    try:
        first.delete(A, outcome.claim.id, now=clock.now())
        first.checkpoint()
        assert first.scrub_pending
    finally:
        _stop(reader)
    # `first` is never closed: a killed process checkpoints nothing on the way out.
    second = ApswClaimStore(db, secret_policy=policy, clock=clock)
    try:
        assert not second.scrub_pending
        assert [p.name for p in tmp_path.iterdir() if NEEDLE in p.read_bytes()] == []
    finally:
        second.close()
        first.close()
