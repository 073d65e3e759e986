"""Agent clear (R-FORGET-3) and retirement (R-FORGET-4).

A clear is a persisted job: while its row exists the guard trigger refuses INSERT/UPDATE of
the agent's claims and every read is fenced. Batches of ≤256 rows commit one at a time
(tombstones + delete, the lexical mirror in step by trigger), so a crash keeps every
committed batch and the next start resumes from the persisted phase; the service drives the
batches and yields between them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from memory_adapters.sql_claims import audit, tombstones
from memory_adapters.sql_claims.session import Session
from memory_core.domain.errors import NotFound, ValidationError
from memory_core.ports.claims import ClearPhase, ClearProgress
from memory_core.storage.repair import is_internal_kind
from memory_core.storage.tombstones import stored_identities

__all__ = [
    "MAX_CLEAR_BATCH",
    "NAMESPACE_TABLES",
    "begin",
    "finish",
    "pending",
    "retire",
    "run_batch",
]

MAX_CLEAR_BATCH = 256
_JOB_SELECT = "SELECT agent_id, phase, removed_count, created_at FROM agent_memory_clear_job"
# Everything of a namespace except the claims, in the order retirement deletes it.
NAMESPACE_TABLES = (
    "agent_memory_dirty",
    "agent_memory_derivation",
    "agent_memory_tombstone",
    "agent_memory_directive",
    "agent_memory_clear_job",
    "agent_memory_audit",
    "agent_memory_working",
)


def _progress(session: Session, row: Sequence[Any], batch_removed: int = 0) -> ClearProgress:
    agent_id, phase, removed, created_at = row
    return ClearProgress(
        agent_id=agent_id,
        phase=ClearPhase(phase),
        removed_count=removed,
        batch_removed=batch_removed,
        created_at=session.instant(created_at),
    )


def _job(session: Session, agent_id: str) -> Sequence[Any] | None:
    return session.one(f"{_JOB_SELECT} WHERE agent_id = ?{session.dialect.for_update}", (agent_id,))


def begin(session: Session, agent_id: str, *, now: datetime) -> ClearProgress:
    """Persist the job (idempotently); from its commit the agent is fenced."""
    if session.dialect.begin_clear(session, agent_id, now):
        audit.record(session, agent_id=agent_id, event="memory/clear_begin", actor="user", now=now)
    job = _job(session, agent_id)
    assert job is not None
    return _progress(session, job)


def run_batch(
    session: Session,
    agent_id: str,
    *,
    batch_size: int,
    now: datetime,
    step: int | None = None,
    more: Callable[[], bool] | None = None,
    may_end: Callable[[], bool] | None = None,
) -> ClearProgress:
    """One transaction's worth: tombstone claim rows (internal rows have no identity),
    delete, count; the short batch ends the claims phase and drops lineage and dirty state.

    With `step`, rows go `step` at a time and the batch stops early once `more()` says so —
    a dialect whose deletes cost more per row than a batch may take (SQLite's secure FTS5
    deletes) bounds the batch by time, not only by rows. Only a step that found fewer rows
    than it asked for ends the phase, and only once `may_end()` agrees: a dialect with
    physical work still owed for the removed rows (SQLite's index merge) does it in the
    batches that follow, each as bounded as the others."""
    if not 1 <= batch_size <= MAX_CLEAR_BATCH:
        raise ValidationError("batch_size", f"must be in 1..{MAX_CLEAR_BATCH}")
    job = _job(session, agent_id)
    if job is None:
        raise NotFound("no clear job for this agent")
    if job[1] != ClearPhase.CLAIMS.value:
        return _progress(session, job)
    step = batch_size if step is None else min(step, batch_size)
    removed, exhausted = 0, False
    while not exhausted and removed < batch_size:
        asked = min(step, batch_size - removed)
        found = _clear_step(session, agent_id, limit=asked, now=now)
        removed += found
        exhausted = found < asked
        if more is not None and not more():
            break
    session.execute(
        "UPDATE agent_memory_clear_job SET removed_count = removed_count + ? WHERE agent_id = ?",
        (removed, agent_id),
    )
    if exhausted and (may_end is None or may_end()):
        session.execute("DELETE FROM agent_memory_derivation WHERE agent_id = ?", (agent_id,))
        session.execute("DELETE FROM agent_memory_dirty WHERE agent_id = ?", (agent_id,))
        session.execute(
            "UPDATE agent_memory_clear_job SET phase = 'vectors' WHERE agent_id = ?", (agent_id,)
        )
    job = _job(session, agent_id)
    assert job is not None
    return _progress(session, job, batch_removed=removed)


def _clear_step(session: Session, agent_id: str, *, limit: int, now: datetime) -> int:
    """Tombstone and delete up to `limit` of the agent's rows; how many there were."""
    # Every row of the agent, not only those older than the job: the guard admits no new
    # rows, and a row that slipped in any other way must not survive a clear either.
    # Raw columns, not ClaimRow: a row a raw writer corrupted is cleared like any other.
    key = session.dialect.row_key
    rows = session.execute(
        f"""SELECT {key}, kind, scope_type, scope_id, canonical_content, provenance_key
            FROM agent_memory WHERE agent_id = ? ORDER BY {key} LIMIT ?
            {session.dialect.for_update}""",
        (agent_id, limit),
    ).fetchall()
    for _key, kind, scope_type, scope_id, canonical, provenance in rows:
        if is_internal_kind(kind):
            continue
        identities = stored_identities(
            agent_id,
            scope_type=scope_type,
            scope_id=scope_id,
            canonical=canonical,
            provenance=provenance,
        )
        tombstones.write(session, agent_id, identities, reason="agent_clear", now=now)
    if rows:
        session.execute(
            f"DELETE FROM agent_memory WHERE agent_id = ? AND {session.dialect.id_list(key)}",
            (agent_id, [row[0] for row in rows]),
        )
    return len(rows)


def finish(session: Session, agent_id: str, *, now: datetime) -> None:
    job = _job(session, agent_id)
    if job is None:
        return
    if job[1] != ClearPhase.VECTORS.value:
        raise ValidationError("phase", "the clear has not finished deleting claims")
    session.execute("DELETE FROM agent_memory_clear_job WHERE agent_id = ?", (agent_id,))
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/clear_done",
        actor="system",
        now=now,
        refs={"removed": job[2]},
    )


def pending(session: Session) -> list[ClearProgress]:
    rows = session.execute(f"{_JOB_SELECT} ORDER BY created_at, agent_id").fetchall()
    return [_progress(session, row) for row in rows]


def retire(session: Session, agent_id: str) -> None:
    """Everything of the namespace, in one transaction; claims first so the mirror and
    dirty triggers run while their rows still exist, then the side tables they feed."""
    session.execute("DELETE FROM agent_memory WHERE agent_id = ?", (agent_id,))
    for table in NAMESPACE_TABLES:
        session.execute(f"DELETE FROM {table} WHERE agent_id = ?", (agent_id,))
