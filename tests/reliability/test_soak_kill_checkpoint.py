"""A writer SIGKILLed inside the checkpoint that makes a delete physical (R-PRIV-3, issue 11).

The child process stores a claim with a marker, checkpoints, deletes it and is killed at the
checkpoint's WAL statement — after the durable scrub-pending mark was made, before the WAL was
folded back. Forensically: at that moment the deleted text is still in the WAL (so the scan
can fail) and the mark says a scrub is owed; once a new process opens the store and the scrub
finishes, no file holds the text or any of its trigrams, and the mark is gone.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.secrets import PatternSecretPolicy

MARKER = "zqxvbwkjhgfd"
TRIGRAMS = {MARKER[i : i + 3] for i in range(len(MARKER) - 2)}

_CHILD = textwrap.dedent(
    f"""
    import sys, time
    from memory_adapters.sqlite_store import ApswClaimStore
    from memory_contracts.fakes import ManualClock
    from memory_core.domain.claims import ClaimDraft, WriteOrigin
    from memory_core.domain.secrets import PatternSecretPolicy

    clock = ManualClock()
    store = ApswClaimStore(sys.argv[1], secret_policy=PatternSecretPolicy(), clock=clock)
    notes = [f"note {{i}} on tea" for i in range(200)]
    store.insert_many(
        [ClaimDraft(agent_id="a", kind="semantic", content=note) for note in notes],
        origin=WriteOrigin.EXTRACTION, now=clock.now(),
    )
    outcome = store.insert(
        ClaimDraft(agent_id="a", kind="semantic", content="Her locker code is {MARKER} today"),
        origin=WriteOrigin.USER_ADD, now=clock.now(),
    )
    store.checkpoint()

    def pause_at_checkpoint(cursor, sql, bindings):
        if "wal_checkpoint" in sql:
            print("checkpointing", flush=True)
            time.sleep(60)  # the parent kills us here
        return True

    store.delete("a", outcome.claim.id, now=clock.now())
    store._conn.exec_trace = pause_at_checkpoint
    store.checkpoint()
    """
)


def _found(directory: Path) -> tuple[bool, set[str]]:
    blobs = [path.read_bytes() for path in directory.iterdir() if path.is_file()]
    text = any(MARKER.encode() in blob for blob in blobs)
    return text, {gram for gram in TRIGRAMS if any(gram.encode() in blob for blob in blobs)}


def test_a_writer_killed_inside_the_checkpoint_leaves_a_mark_and_the_next_open_scrubs(
    tmp_path: Path,
) -> None:
    """R-PRIV-3, R-FORGET-1: the mark survives the SIGKILL; after a restart's scrub no file
    holds the deleted text or a trigram of it."""
    db = tmp_path / "memory.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "checkpointing"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    mark = tmp_path / "memory.sqlite3.scrub-pending"
    assert mark.exists()
    # The kill left the deleted page images in the WAL: the scan below can fail.
    assert _found(tmp_path)[1] == TRIGRAMS

    store = ApswClaimStore(db, secret_policy=PatternSecretPolicy(), clock=ManualClock())
    try:
        assert not store.scrub_pending
        assert not mark.exists()
        assert _found(tmp_path) == (False, set())
        assert len(store.list_claims("a", limit=500)) == 200
    finally:
        store.close()
    assert _found(tmp_path) == (False, set())
