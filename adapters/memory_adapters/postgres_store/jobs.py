"""Agent clear (R-FORGET-3) and retirement (R-FORGET-4).

A clear is a persisted job: while its row exists the guard trigger refuses INSERT/UPDATE of
the agent's claims and every read is fenced. Batches of ≤256 rows commit one at a time
(tombstones + delete), so a crash keeps every committed batch and the next start resumes
from the persisted phase; the service drives the batches and yields between them.
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from memory_adapters.postgres_store import audit, tombstones
from memory_core.domain.claims import ClaimKind
from memory_core.domain.errors import NotFound, ValidationError
from memory_core.ports.claims import ClearPhase, ClearProgress

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
_INTERNAL_KINDS = frozenset(kind.value for kind in ClaimKind if kind.is_internal)
_JOB_SELECT = "SELECT agent_id, phase, removed_count, created_at FROM agent_memory_clear_job"
# Everything of a namespace except the claims, in the order retirement deletes it.
NAMESPACE_TABLES = (
    "agent_memory_dirty",
    "agent_memory_derivation",
    "agent_memory_tombstone",
    "agent_memory_directive",
    "agent_memory_clear_job",
    "agent_memory_audit",
)

_Job = tuple[str, str, int, datetime]


def _progress(row: _Job, batch_removed: int = 0) -> ClearProgress:
    agent_id, phase, removed, created_at = row
    return ClearProgress(
        agent_id=agent_id,
        phase=ClearPhase(phase),
        removed_count=removed,
        batch_removed=batch_removed,
        created_at=created_at,
    )


def _job(conn: psycopg.Connection, agent_id: str, *, lock: bool = False) -> _Job | None:
    suffix = " FOR UPDATE" if lock else ""
    return conn.execute(f"{_JOB_SELECT} WHERE agent_id = %s{suffix}", (agent_id,)).fetchone()


def begin(conn: psycopg.Connection, agent_id: str, *, now: datetime) -> ClearProgress:
    """Persist the job (idempotently); from its commit the agent is fenced."""
    inserted = conn.execute(
        """INSERT INTO agent_memory_clear_job (agent_id, created_at) VALUES (%s, %s)
           ON CONFLICT (agent_id) DO NOTHING""",
        (agent_id, now),
    ).rowcount
    if inserted:
        audit.record(conn, agent_id=agent_id, event="memory/clear_begin", actor="user", now=now)
    job = _job(conn, agent_id)
    assert job is not None
    return _progress(job)


def run_batch(
    conn: psycopg.Connection, agent_id: str, *, batch_size: int, now: datetime
) -> ClearProgress:
    """One transaction's worth: tombstone claim rows (internal rows have no identity),
    delete, count; the short batch ends the claims phase and drops lineage and dirty state."""
    if not 1 <= batch_size <= MAX_CLEAR_BATCH:
        raise ValidationError("batch_size", f"must be in 1..{MAX_CLEAR_BATCH}")
    job = _job(conn, agent_id, lock=True)
    if job is None:
        raise NotFound("no clear job for this agent")
    if job[1] != ClearPhase.CLAIMS.value:
        return _progress(job)
    # Raw columns, not ClaimRow: a row a raw writer corrupted is cleared like any other.
    rows = conn.execute(
        """SELECT id, kind, scope_type, scope_id, canonical_content, provenance_key
           FROM agent_memory WHERE agent_id = %s ORDER BY id LIMIT %s FOR UPDATE""",
        (agent_id, batch_size),
    ).fetchall()
    for _id, kind, scope_type, scope_id, canonical, provenance in rows:
        if kind in _INTERNAL_KINDS:
            continue
        identities = tombstones.identities_of(
            agent_id,
            scope_type=scope_type,
            scope_id=scope_id,
            canonical=canonical,
            provenance=provenance,
        )
        tombstones.write(conn, agent_id, identities, reason="agent_clear", now=now)
    conn.execute(
        "DELETE FROM agent_memory WHERE agent_id = %s AND id = ANY(%s::text[])",
        (agent_id, [row[0] for row in rows]),
    )
    conn.execute(
        "UPDATE agent_memory_clear_job SET removed_count = removed_count + %s WHERE agent_id = %s",
        (len(rows), agent_id),
    )
    if len(rows) < batch_size:
        conn.execute("DELETE FROM agent_memory_derivation WHERE agent_id = %s", (agent_id,))
        conn.execute("DELETE FROM agent_memory_dirty WHERE agent_id = %s", (agent_id,))
        conn.execute(
            "UPDATE agent_memory_clear_job SET phase = 'vectors' WHERE agent_id = %s", (agent_id,)
        )
    job = _job(conn, agent_id)
    assert job is not None
    return _progress(job, batch_removed=len(rows))


def finish(conn: psycopg.Connection, agent_id: str, *, now: datetime) -> None:
    job = _job(conn, agent_id, lock=True)
    if job is None:
        return
    if job[1] != ClearPhase.VECTORS.value:
        raise ValidationError("phase", "the clear has not finished deleting claims")
    conn.execute("DELETE FROM agent_memory_clear_job WHERE agent_id = %s", (agent_id,))
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/clear_done",
        actor="system",
        now=now,
        refs={"removed": job[2]},
    )


def pending(conn: psycopg.Connection) -> list[ClearProgress]:
    return [_progress(row) for row in conn.execute(f"{_JOB_SELECT} ORDER BY created_at, agent_id")]


def retire(conn: psycopg.Connection, agent_id: str) -> None:
    """Everything of the namespace, in one transaction; claims first so the dirty trigger
    runs while its rows still exist, then the side tables it feeds."""
    conn.execute("DELETE FROM agent_memory WHERE agent_id = %s", (agent_id,))
    for table in NAMESPACE_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE agent_id = %s", (agent_id,))
