"""Agent clear (R-FORGET-3) and retirement (R-FORGET-4).

A clear is a persisted job: while its row exists the triggers refuse INSERT/UPDATE of the
agent's claims and every read is fenced. Batches of ≤256 rows commit one at a time
(tombstones + delete, the FTS trigger in step), so a crash keeps every committed batch and
the next start resumes from the persisted phase. `run_clear` drives a job from an event loop,
yielding between batches.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

import apsw

from memory_adapters.sqlite_store import audit, tombstones
from memory_adapters.sqlite_store.rows import from_ms
from memory_core.domain.claims import ClaimKind
from memory_core.domain.errors import NotFound, ValidationError
from memory_core.ports.claims import ClaimStore, ClearPhase, ClearProgress

__all__ = [
    "MAX_CLEAR_BATCH",
    "begin",
    "finish",
    "pending",
    "resume_pending_clears",
    "retire",
    "run_batch",
    "run_clear",
]

_log = logging.getLogger(__name__)

MAX_CLEAR_BATCH = 256
_INTERNAL_KINDS = frozenset(kind.value for kind in ClaimKind if kind.is_internal)
_JOB_SELECT = "SELECT agent_id, phase, removed_count, created_at FROM agent_memory_clear_job"


def _progress(row: tuple[str, str, int, int], batch_removed: int = 0) -> ClearProgress:
    agent_id, phase, removed, created_at = row
    return ClearProgress(
        agent_id=agent_id,
        phase=ClearPhase(phase),
        removed_count=removed,
        batch_removed=batch_removed,
        created_at=from_ms(created_at),
    )


def _job(conn: apsw.Connection, agent_id: str) -> tuple[str, str, int, int] | None:
    return conn.execute(f"{_JOB_SELECT} WHERE agent_id = ?", (agent_id,)).fetchone()


def begin(conn: apsw.Connection, agent_id: str, *, now_ms: int) -> ClearProgress:
    """Persist the job (idempotently) with the cutoff of the agent's rows."""
    conn.execute(
        """INSERT INTO agent_memory_clear_job (agent_id, cutoff_rowid, created_at)
           SELECT ?, COALESCE(max(rid), 0), ? FROM agent_memory WHERE agent_id = ?
           ON CONFLICT (agent_id) DO NOTHING""",
        (agent_id, now_ms, agent_id),
    )
    if conn.changes():
        audit.record(
            conn, agent_id=agent_id, event="memory/clear_begin", actor="user", now_ms=now_ms
        )
    job = _job(conn, agent_id)
    assert job is not None
    return _progress(job)


def run_batch(
    conn: apsw.Connection, agent_id: str, *, batch_size: int, now_ms: int
) -> ClearProgress:
    """One transaction's worth: tombstone claim rows (internal rows have no identity),
    delete, count; the short batch ends the claims phase and drops lineage and dirty state."""
    if not 1 <= batch_size <= MAX_CLEAR_BATCH:
        raise ValidationError("batch_size", f"must be in 1..{MAX_CLEAR_BATCH}")
    job = _job(conn, agent_id)
    if job is None:
        raise NotFound("no clear job for this agent")
    if job[1] != ClearPhase.CLAIMS.value:
        return _progress(job)
    # Every row of the agent, not only those under the cutoff: the guard admits no new
    # rows, and a row that slipped in any other way must not survive a clear either.
    # Raw columns, not ClaimRow: a row a raw writer corrupted must be cleared like any other.
    rows = conn.execute(
        """SELECT rid, kind, scope_type, scope_id, canonical_content, provenance_key
           FROM agent_memory WHERE agent_id = ? ORDER BY rid LIMIT ?""",
        (agent_id, batch_size),
    ).fetchall()
    for _rid, kind, scope_type, scope_id, canonical, provenance in rows:
        if kind in _INTERNAL_KINDS:
            continue
        identities = tombstones.identities_of(
            agent_id,
            scope_type=scope_type,
            scope_id=scope_id,
            canonical=canonical,
            provenance=provenance,
        )
        tombstones.write(conn, agent_id, identities, reason="agent_clear", now_ms=now_ms)
    conn.executemany("DELETE FROM agent_memory WHERE rid = ?", [(row[0],) for row in rows])
    conn.execute(
        "UPDATE agent_memory_clear_job SET removed_count = removed_count + ? WHERE agent_id = ?",
        (len(rows), agent_id),
    )
    if len(rows) < batch_size:
        conn.execute("DELETE FROM agent_memory_derivation WHERE agent_id = ?", (agent_id,))
        conn.execute("DELETE FROM agent_memory_dirty WHERE agent_id = ?", (agent_id,))
        conn.execute(
            "UPDATE agent_memory_clear_job SET phase = 'vectors' WHERE agent_id = ?", (agent_id,)
        )
    job = _job(conn, agent_id)
    assert job is not None
    return _progress(job, batch_removed=len(rows))


def finish(conn: apsw.Connection, agent_id: str, *, now_ms: int) -> None:
    job = _job(conn, agent_id)
    if job is None:
        return
    if job[1] != ClearPhase.VECTORS.value:
        raise ValidationError("phase", "the clear has not finished deleting claims")
    conn.execute("DELETE FROM agent_memory_clear_job WHERE agent_id = ?", (agent_id,))
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/clear_done",
        actor="system",
        now_ms=now_ms,
        refs={"removed": job[2]},
    )


def pending(conn: apsw.Connection) -> list[ClearProgress]:
    return [_progress(row) for row in conn.execute(f"{_JOB_SELECT} ORDER BY created_at, agent_id")]


def retire(conn: apsw.Connection, agent_id: str) -> None:
    """Everything of the namespace, in one transaction; claims first so the FTS and dirty
    triggers run while their rows still exist, then the side tables they feed."""
    conn.execute("DELETE FROM agent_memory WHERE agent_id = ?", (agent_id,))
    for table in (
        "agent_memory_dirty",
        "agent_memory_derivation",
        "agent_memory_tombstone",
        "agent_memory_directive",
        "agent_memory_clear_job",
        "agent_memory_audit",
    ):
        conn.execute(f"DELETE FROM {table} WHERE agent_id = ?", (agent_id,))


async def _yield_to_loop() -> None:
    await asyncio.sleep(0)


async def run_clear(
    store: ClaimStore,
    agent_id: str,
    *,
    now: datetime,
    batch_size: int = MAX_CLEAR_BATCH,
    yield_between: Callable[[], Awaitable[None]] = _yield_to_loop,
    on_progress: Callable[[ClearProgress], None] | None = None,
    vector_cleanup: Callable[[str], Awaitable[None]] | None = None,
) -> ClearProgress:
    """Drive a clear to the end: begin (or resume), batches with a yield between each, then
    vector cleanup and the job's removal. A failing vector cleanup is logged and deferred
    (R-VEC-4 removes orphans at the next warm-up); the job still finishes."""
    progress = store.begin_clear(agent_id, now=now)
    while progress.phase is ClearPhase.CLAIMS:
        progress = store.run_clear_batch(agent_id, batch_size=batch_size)
        if on_progress is not None:
            on_progress(progress)
        await yield_between()
    if vector_cleanup is not None:
        try:
            await vector_cleanup(agent_id)
        except Exception as exc:  # deferred, never fatal: the claims are already gone
            _log.warning("vector cleanup deferred after clear: %s", type(exc).__name__)
    store.finish_clear(agent_id)
    done = ClearProgress(
        agent_id=agent_id, phase=ClearPhase.DONE, removed_count=progress.removed_count
    )
    if on_progress is not None:
        on_progress(done)
    return done


async def resume_pending_clears(
    store: ClaimStore,
    *,
    now: datetime,
    yield_between: Callable[[], Awaitable[None]] = _yield_to_loop,
    on_progress: Callable[[ClearProgress], None] | None = None,
    vector_cleanup: Callable[[str], Awaitable[None]] | None = None,
) -> list[ClearProgress]:
    """Startup recovery: every persisted job, oldest first, one agent at a time."""
    finished = []
    for job in store.pending_clears():
        finished.append(
            await run_clear(
                store,
                job.agent_id,
                now=now,
                yield_between=yield_between,
                on_progress=on_progress,
                vector_cleanup=vector_cleanup,
            )
        )
    return finished
