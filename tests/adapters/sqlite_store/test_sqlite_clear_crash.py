"""Crash test of the agent clear (R-FORGET-3): a subprocess clearing 2,500 claims is
SIGKILLed after a few committed batches; in between nothing of the agent is readable or
insertable; reopening resumes from the persisted phase and finishes; every count adds up."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import apsw
import pytest
from clear_support import run_clear

from memory_adapters.sqlite_store import ApswClaimStore, fts
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.errors import ClearInProgress, NotFound
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import ClearPhase

A, B = "agent-a", "agent-b"
CLAIMS = 2_500  # ten batches: the kill lands well before the end
BATCH = 256
KILL_AFTER_BATCHES = 3

_CHILD = textwrap.dedent(
    """
    import sys
    from memory_adapters.sqlite_store import ApswClaimStore
    from memory_contracts.fakes import ManualClock
    from memory_core.domain.secrets import PatternSecretPolicy

    clock = ManualClock()
    store = ApswClaimStore(sys.argv[1], secret_policy=PatternSecretPolicy(), clock=clock)
    progress = store.begin_clear("agent-a", now=clock.now())
    while progress.phase.value == "claims":
        progress = store.run_clear_batch("agent-a")
        # Printed only after run_clear_batch returned, i.e. after its COMMIT.
        print(progress.phase.value, progress.removed_count, flush=True)
    """
)


def _populate(db: Path, clock: ManualClock) -> list[str]:
    store = ApswClaimStore(db, secret_policy=PatternSecretPolicy(), clock=clock)
    drafts = [
        ClaimDraft(agent_id=A, kind="episodic", content=f"event number {i} in the log")
        for i in range(CLAIMS)
    ]
    outcomes = store.insert_many(drafts, origin=WriteOrigin.EXTRACTION, now=clock.now())
    store.insert(
        ClaimDraft(agent_id=A, kind="persona", content="persona row"),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    store.insert_many(
        [ClaimDraft(agent_id=B, kind="semantic", content=f"bystander {i}") for i in range(50)],
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    store.close()
    return [outcome.claim.id for outcome in outcomes if outcome.claim is not None]


def _kill_mid_clear(db: Path) -> list[int]:
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(db)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert child.stdout is not None
    seen: list[int] = []
    try:
        for line in child.stdout:
            phase, removed = line.split()
            assert phase == ClearPhase.CLAIMS.value
            seen.append(int(removed))
            if len(seen) == KILL_AFTER_BATCHES:
                os.kill(child.pid, signal.SIGKILL)
                break
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    return seen


def _tables(db: Path) -> list[str]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return fts.owner_tables(conn)
    finally:
        conn.close()


def _count(db: Path, sql: str, *params: object) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute(sql, params).fetchone()[0])
    finally:
        conn.close()


@pytest.mark.slow
def test_killed_clear_keeps_committed_batches_fences_the_agent_and_resumes(
    tmp_path: Path,
) -> None:
    """R-FORGET-3: committed batches stay, the partial one rolls back, the fence holds
    across the crash, startup resumes from the persisted phase, and the counts add up."""
    db = tmp_path / "memory.sqlite3"
    clock = ManualClock()
    ids = _populate(db, clock)
    seen = _kill_mid_clear(db)
    # Batches are bounded by time as well as rows (issue 15): each removes 1..BATCH rows.
    steps = [after - before for before, after in itertools.pairwise([0, *seen])]
    assert len(seen) == KILL_AFTER_BATCHES and all(0 < step <= BATCH for step in steps), seen

    store = ApswClaimStore(db, secret_policy=PatternSecretPolicy(), clock=clock)
    try:
        (job,) = store.pending_clears()
        assert (job.agent_id, job.phase) == (A, ClearPhase.CLAIMS)
        removed = job.removed_count
        # Whole batches only: what was printed, or one more batch that committed before the
        # kill; the batch in flight left no trace (the counts below add up).
        assert seen[-1] <= removed <= seen[-1] + BATCH and removed < CLAIMS
        left = _count(db, "SELECT count(*) FROM agent_memory WHERE agent_id = ?", A)
        assert left + removed == CLAIMS + 1  # + the persona row
        tombstoned = _count(db, "SELECT count(*) FROM agent_memory_tombstone WHERE agent_id = ?", A)
        assert tombstoned == 3 * removed  # provenance, content, folded content per claim

        # Between the crash and the resume nothing of the agent is readable or insertable.
        for claim_id in (ids[0], ids[-1]):
            with pytest.raises(NotFound):
                store.get(A, claim_id)
        assert store.list_claims(A, include_inactive=True) == []
        assert store.search_fts(A, ["event"], scope_filter=ScopeFilter.agent_only(), limit=5) == []
        with pytest.raises(ClearInProgress):
            store.insert(
                ClaimDraft(agent_id=A, kind="semantic", content="written during the crash"),
                origin=WriteOrigin.USER_ADD,
                now=clock.now(),
            )
        raw = apsw.Connection(str(db))
        fts.register_functions(raw)
        with pytest.raises(apsw.ConstraintError, match="clear in progress"):
            raw.execute(
                "INSERT INTO agent_memory (id, agent_id, kind, content, canonical_content,"
                " created_at, updated_at) VALUES ('raw-1', ?, 'semantic', 'x', 'x', 0, 0)",
                (A,),
            )
        raw.close()

        # Resuming is begin_clear again: it returns the persisted job, not a new one.
        assert store.begin_clear(A, now=clock.now()) == job
        progress: list[int] = []
        last = asyncio.run(
            run_clear(
                store, A, now=clock.now(), on_progress=lambda p: progress.append(p.removed_count)
            )
        )
        assert (last.agent_id, last.phase, last.removed_count) == (
            A,
            ClearPhase.VECTORS,
            CLAIMS + 1,
        )
        assert progress[0] > removed and progress == sorted(progress)
        assert store.pending_clears() == []
        assert len(store.list_claims(B)) == 50
    finally:
        store.close()
    assert _count(db, "SELECT count(*) FROM agent_memory WHERE agent_id = ?", A) == 0
    assert _count(db, "SELECT count(*) FROM agent_memory_tombstone WHERE agent_id = ?", A) == (
        3 * CLAIMS
    )
    # A's index is dropped with the clear; B's, untouched, still holds its 50 rows.
    assert _tables(db) == [fts.owner_table(B)]
    assert _count(db, f"SELECT count(*) FROM {fts.owner_table(B)}") == 50
    assert _count(db, "SELECT count(*) FROM agent_memory_dirty WHERE agent_id = ?", A) == 0
