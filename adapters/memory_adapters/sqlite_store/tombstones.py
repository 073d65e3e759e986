"""Hash-only tombstones: looked up and written inside the caller's transaction (R-WRITE-4,
R-FORGET-1). Nothing here ever sees a tombstone's plaintext, because there is none."""

from __future__ import annotations

import json
from collections.abc import Sequence

import apsw

from memory_adapters.sqlite_store.rows import ClaimRow
from memory_core.domain.errors import ScopeError
from memory_core.domain.provenance import TombstoneIdentity, tombstone_identities
from memory_core.domain.scope import Scope

__all__ = ["identities_of", "identities_of_row", "matching", "release", "write"]


def _pairs(identities: Sequence[TombstoneIdentity]) -> str:
    return json.dumps([[identity.kind.value, identity.hash] for identity in identities])


_MATCH = """SELECT 1 FROM agent_memory_tombstone
              WHERE agent_id = ? AND identity_kind = ? AND identity_hash = ?"""


def matching(conn: apsw.Connection, agent_id: str, identities: Sequence[TombstoneIdentity]) -> int:
    """How many of `identities` are tombstoned for this owner (one primary-key probe each:
    this runs on every insert)."""
    return sum(
        conn.execute(_MATCH, (agent_id, identity.kind.value, identity.hash)).fetchone() is not None
        for identity in identities
    )


def release(conn: apsw.Connection, agent_id: str, identities: Sequence[TombstoneIdentity]) -> int:
    """Delete exactly these tombstones (a user's explicit re-add, R-WRITE-5)."""
    conn.execute(
        """DELETE FROM agent_memory_tombstone
           WHERE agent_id = ? AND (identity_kind, identity_hash) IN (
             SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))""",
        (agent_id, _pairs(identities)),
    )
    return conn.changes()


def write(
    conn: apsw.Connection,
    agent_id: str,
    identities: Sequence[TombstoneIdentity],
    *,
    reason: str,
    now_ms: int,
) -> int:
    """Insert tombstones (idempotent); returns how many were new."""
    written = 0
    for identity in identities:
        conn.execute(
            """INSERT INTO agent_memory_tombstone
                 (agent_id, identity_kind, identity_hash, created_at, reason)
               VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
            (agent_id, identity.kind.value, identity.hash, now_ms, reason),
        )
        written += conn.changes()
    return written


def identities_of(
    agent_id: str,
    *,
    scope_type: object,
    scope_id: object,
    canonical: object,
    provenance: object,
) -> tuple[TombstoneIdentity, ...]:
    """A stored row's identities, from raw column values. A row whose scope pair is
    unreadable (only repair and clear meet one) is tombstoned by its Agent-scope content
    identity: that suppresses more, never less."""
    try:
        scope = Scope(kind=scope_type, scope_id=scope_id)  # type: ignore[arg-type]
    except (ScopeError, ValueError, TypeError):
        scope = Scope.agent()
    key = provenance if isinstance(provenance, str) else None
    text = canonical if isinstance(canonical, str) else str(canonical)
    return tombstone_identities(agent_id, scope, text, key)


def identities_of_row(row: ClaimRow) -> tuple[TombstoneIdentity, ...]:
    return identities_of(
        row.agent_id,
        scope_type=row.scope_type,
        scope_id=row.scope_id,
        canonical=row.canonical_content,
        provenance=row.provenance_key,
    )
