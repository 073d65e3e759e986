"""Archive, restore and selective delete (R-FORGET-1, R-FORGET-2). Internal rows are refused
by `require_owned_claim`; each function runs inside the caller's write transaction."""

from __future__ import annotations

from datetime import datetime

import psycopg

from memory_adapters.postgres_store import audit, tombstones
from memory_adapters.postgres_store.claims import require_owned_claim
from memory_adapters.postgres_store.queries import fetch_claim_row
from memory_adapters.postgres_store.rows import ClaimRow
from memory_core.domain.claims import Lifecycle
from memory_core.ports.claims import DeleteOutcome

__all__ = ["archive", "delete", "restore"]


def _reread(conn: psycopg.Connection, row: ClaimRow) -> ClaimRow:
    fresh = fetch_claim_row(conn, row.agent_id, row.id)
    assert fresh is not None
    return fresh


def archive(conn: psycopg.Connection, agent_id: str, claim_id: str, *, now: datetime) -> ClaimRow:
    """Recoverable forget: the row stays, recall loses it. Idempotent."""
    row = require_owned_claim(conn, agent_id, claim_id)
    if row.lifecycle_state == Lifecycle.ARCHIVED.value:
        return row
    conn.execute(
        """UPDATE agent_memory SET lifecycle_state = 'archived', revision = revision + 1,
             updated_at = %s WHERE agent_id = %s AND id = %s""",
        (now, agent_id, claim_id),
    )
    audit.record(
        conn, agent_id=agent_id, event="memory/archive", actor="user", now=now, memory_id=claim_id
    )
    return _reread(conn, row)


def restore(conn: psycopg.Connection, agent_id: str, claim_id: str, *, now: datetime) -> ClaimRow:
    """Reactivate an archived claim; it is re-embedded (its vector may be gone). Idempotent
    for a row that is not archived."""
    row = require_owned_claim(conn, agent_id, claim_id)
    if row.lifecycle_state != Lifecycle.ARCHIVED.value:
        return row
    conn.execute(
        """UPDATE agent_memory SET lifecycle_state = 'active', revision = revision + 1,
             updated_at = %s, embedding_state = 'pending', embedding_provider = NULL,
             embedding_model = NULL, embedding_dim = NULL
           WHERE agent_id = %s AND id = %s""",
        (now, agent_id, claim_id),
    )
    audit.record(
        conn, agent_id=agent_id, event="memory/restore", actor="user", now=now, memory_id=claim_id
    )
    return _reread(conn, row)


def delete(
    conn: psycopg.Connection, agent_id: str, claim_id: str, *, now: datetime
) -> DeleteOutcome:
    """Tombstones of the stored provenance and the normalised content, then the delete, in
    the caller's transaction (R-FORGET-1)."""
    row = require_owned_claim(conn, agent_id, claim_id)
    written = tombstones.write(
        conn, agent_id, tombstones.identities_of_row(row), reason="selective_delete", now=now
    )
    conn.execute("DELETE FROM agent_memory WHERE agent_id = %s AND id = %s", (agent_id, claim_id))
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/delete",
        actor="user",
        now=now,
        memory_id=claim_id,
        refs={"tombstones": written},
    )
    return DeleteOutcome(claim_id=claim_id, tombstones_written=written)
