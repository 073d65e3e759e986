"""Archive, restore and selective delete (R-FORGET-1, R-FORGET-2). Internal rows are
refused by `require_owned_claim`; each function runs inside the caller's transaction."""

from __future__ import annotations

import apsw

from memory_adapters.sqlite_store import audit, tombstones
from memory_adapters.sqlite_store.claims import require_owned_claim
from memory_adapters.sqlite_store.queries import fetch_claim_row
from memory_adapters.sqlite_store.rows import ClaimRow
from memory_core.domain.claims import Lifecycle
from memory_core.ports.claims import DeleteOutcome

__all__ = ["archive", "delete", "restore"]


def _reread(conn: apsw.Connection, row: ClaimRow) -> ClaimRow:
    fresh = fetch_claim_row(conn, row.agent_id, row.id)
    assert fresh is not None
    return fresh


def archive(conn: apsw.Connection, agent_id: str, claim_id: str, *, now_ms: int) -> ClaimRow:
    """Recoverable forget: the row stays, recall and the FTS mirror lose it. Idempotent."""
    row = require_owned_claim(conn, agent_id, claim_id)
    if row.lifecycle_state == Lifecycle.ARCHIVED.value:
        return row
    conn.execute(
        """UPDATE agent_memory SET lifecycle_state = 'archived', revision = revision + 1,
             updated_at = ? WHERE rid = ?""",
        (now_ms, row.rid),
    )
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/archive",
        actor="user",
        now_ms=now_ms,
        memory_id=claim_id,
    )
    return _reread(conn, row)


def restore(conn: apsw.Connection, agent_id: str, claim_id: str, *, now_ms: int) -> ClaimRow:
    """Reactivate an archived claim; it is re-embedded (its vector may be gone). Idempotent
    for a row that is not archived."""
    row = require_owned_claim(conn, agent_id, claim_id)
    if row.lifecycle_state != Lifecycle.ARCHIVED.value:
        return row
    conn.execute(
        """UPDATE agent_memory SET lifecycle_state = 'active', revision = revision + 1,
             updated_at = ?, embedding_state = 'pending', embedding_provider = NULL,
             embedding_model = NULL, embedding_dim = NULL
           WHERE rid = ?""",
        (now_ms, row.rid),
    )
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/restore",
        actor="user",
        now_ms=now_ms,
        memory_id=claim_id,
    )
    return _reread(conn, row)


def delete(conn: apsw.Connection, agent_id: str, claim_id: str, *, now_ms: int) -> DeleteOutcome:
    """Tombstones of the stored provenance and the normalised content, then the delete; the
    FTS trigger removes the mirror entry in the same transaction."""
    row = require_owned_claim(conn, agent_id, claim_id)
    written = tombstones.write(
        conn, agent_id, tombstones.identities_of_row(row), reason="selective_delete", now_ms=now_ms
    )
    conn.execute("DELETE FROM agent_memory WHERE rid = ?", (row.rid,))
    audit.record(
        conn,
        agent_id=agent_id,
        event="memory/delete",
        actor="user",
        now_ms=now_ms,
        memory_id=claim_id,
        refs={"tombstones": written},
    )
    return DeleteOutcome(claim_id=claim_id, tombstones_written=written)
