"""Hash-only tombstones, looked up and written inside the caller's transaction (R-WRITE-4,
R-FORGET-1). Nothing here ever sees a tombstone's plaintext, because there is none. Each
identity is one primary-key probe or write: a row has at most three identities."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory_adapters.sql_claims.rows import ClaimRow
from memory_adapters.sql_claims.session import Session
from memory_core.domain.provenance import TombstoneIdentity
from memory_core.storage.tombstones import stored_identities

__all__ = ["buried", "identities_of_row", "matching", "release", "write"]

_KEY = "agent_id = ? AND identity_kind = ? AND identity_hash = ?"


def matching(session: Session, agent_id: str, identities: Sequence[TombstoneIdentity]) -> int:
    """How many of `identities` are tombstoned for this owner (this runs on every insert)."""
    return sum(
        session.one(
            f"SELECT 1 FROM agent_memory_tombstone WHERE {_KEY}",
            (agent_id, identity.kind.value, identity.hash),
        )
        is not None
        for identity in identities
    )


def release(session: Session, agent_id: str, identities: Sequence[TombstoneIdentity]) -> int:
    """Delete exactly these tombstones (a user's explicit re-add, R-WRITE-5)."""
    return sum(
        session.changed(
            f"DELETE FROM agent_memory_tombstone WHERE {_KEY}",
            (agent_id, identity.kind.value, identity.hash),
        )
        for identity in identities
    )


def write(
    session: Session,
    agent_id: str,
    identities: Sequence[TombstoneIdentity],
    *,
    reason: str,
    now: datetime,
) -> int:
    """Insert tombstones (idempotent); returns how many were new."""
    return sum(
        session.changed(
            """INSERT INTO agent_memory_tombstone
                 (agent_id, identity_kind, identity_hash, created_at, reason)
               VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
            (agent_id, identity.kind.value, identity.hash, now, reason),
        )
        for identity in identities
    )


def identities_of_row(row: ClaimRow) -> tuple[TombstoneIdentity, ...]:
    return stored_identities(
        row.agent_id,
        scope_type=row.scope_type,
        scope_id=row.scope_id,
        canonical=row.canonical_content,
        provenance=row.provenance_key,
    )


def buried(
    session: Session, probes: Sequence[tuple[str, Sequence[TombstoneIdentity]]]
) -> set[tuple[str, str, str]]:
    """Which of the probed `(agent_id, identities)` are tombstoned, as `(agent_id, kind,
    hash)`: one primary-key lookup per owner and identity kind for a whole insert batch,
    where `matching` costs a statement per identity."""
    wanted: dict[tuple[str, str], set[str]] = {}
    for agent_id, identities in probes:
        for identity in identities:
            wanted.setdefault((agent_id, identity.kind.value), set()).add(identity.hash)
    found: set[tuple[str, str, str]] = set()
    for (agent_id, kind), hashes in wanted.items():
        rows = session.execute(
            f"""SELECT identity_hash FROM agent_memory_tombstone
                WHERE agent_id = ? AND identity_kind = ?
                  AND {session.dialect.id_list("identity_hash")}""",
            (agent_id, kind, sorted(hashes)),
        )
        found.update((agent_id, kind, str(value)) for (value,) in rows)
    return found
