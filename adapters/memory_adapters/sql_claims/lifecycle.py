"""Archive, restore and selective delete (R-FORGET-1, R-FORGET-2). Internal rows are refused
by `require_owned_claim`; each function runs inside the caller's write transaction, and the
store's triggers keep its lexical mirror in step."""

from __future__ import annotations

from datetime import datetime

from memory_adapters.sql_claims import audit, conflict_links, tombstones
from memory_adapters.sql_claims.claims import require_owned_claim
from memory_adapters.sql_claims.maintenance import merged_rows
from memory_adapters.sql_claims.queries import fetch_claim_row
from memory_adapters.sql_claims.rows import ClaimRow
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import Lifecycle
from memory_core.ports.claims import DeleteOutcome
from memory_core.storage.conflicts import Removal

__all__ = ["archive", "delete", "restore"]

_RESTORED = (
    "lifecycle_state = 'active', revision = revision + 1, updated_at = ?,"
    " embedding_state = 'pending', embedding_provider = NULL, embedding_model = NULL,"
    " embedding_dim = NULL"
)
_ARCHIVED = "lifecycle_state = 'archived', revision = revision + 1, updated_at = ?"


def _transition(
    session: Session, agent_id: str, claim_id: str, *, archive: bool, now: datetime
) -> ClaimRow:
    """Archive (recall loses the row) or restore it (re-embedded: its vector may be gone).
    Idempotent: a row already in the target state is returned unchanged."""
    row = require_owned_claim(session, agent_id, claim_id)
    if (row.lifecycle_state == Lifecycle.ARCHIVED.value) is archive:
        return row
    if archive:
        conflict_links.settle_removed(
            session, agent_id, claim_id, Removal.RETIRE, actor="user", now=now
        )
    session.execute(
        f"UPDATE agent_memory SET {_ARCHIVED if archive else _RESTORED}"
        " WHERE agent_id = ? AND id = ?",
        (now, agent_id, claim_id),
    )
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/archive" if archive else "memory/restore",
        actor="user",
        now=now,
        memory_id=claim_id,
    )
    fresh = fetch_claim_row(session, agent_id, claim_id)
    assert fresh is not None
    return fresh


def archive(session: Session, agent_id: str, claim_id: str, *, now: datetime) -> ClaimRow:
    return _transition(session, agent_id, claim_id, archive=True, now=now)


def restore(session: Session, agent_id: str, claim_id: str, *, now: datetime) -> ClaimRow:
    return _transition(session, agent_id, claim_id, archive=False, now=now)


def delete(session: Session, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
    """Tombstones of the stored provenance and the normalised content, then the delete —
    of the claim and of every row merged into it, whose texts are the same fact: forgetting
    the survivor forgets what it absorbed (R-FORGET-1, reference §8.4)."""
    row = require_owned_claim(session, agent_id, claim_id)
    doomed = [row]
    for merged_id in merged_rows(session, agent_id, claim_id):
        merged = fetch_claim_row(session, agent_id, merged_id, for_update=True)
        if merged is not None:
            doomed.append(merged)
    written = 0
    for victim in doomed:
        conflict_links.settle_removed(
            session, agent_id, victim.id, Removal.DELETE, actor="user", now=now
        )
        written += tombstones.write(
            session,
            agent_id,
            tombstones.identities_of_row(victim),
            reason="selective_delete",
            now=now,
        )
        session.execute(
            "DELETE FROM agent_memory WHERE agent_id = ? AND id = ?", (agent_id, victim.id)
        )
        if victim is not row:  # its lineage edges now name a deleted id: say which
            audit.record(
                session,
                agent_id=agent_id,
                event="memory/delete",
                actor="user",
                now=now,
                memory_id=victim.id,
                refs={"merged_into": claim_id},
            )
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/delete",
        actor="user",
        now=now,
        memory_id=claim_id,
        refs={"tombstones": written, "merged": len(doomed) - 1},
    )
    return DeleteOutcome(claim_id=claim_id, tombstones_written=written)
