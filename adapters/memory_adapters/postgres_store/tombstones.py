"""Hash-only tombstones, looked up and written inside the caller's transaction (R-WRITE-4,
R-FORGET-1). Nothing here ever sees a tombstone's plaintext, because there is none."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg

from memory_adapters.postgres_store.rows import ClaimRow
from memory_core.domain.errors import ScopeError
from memory_core.domain.provenance import TombstoneIdentity, tombstone_identities
from memory_core.domain.scope import Scope

__all__ = ["identities_of", "identities_of_row", "matching", "release", "write"]


def _columns(identities: Sequence[TombstoneIdentity]) -> tuple[list[str], list[str]]:
    return [i.kind.value for i in identities], [i.hash for i in identities]


def matching(
    conn: psycopg.Connection, agent_id: str, identities: Sequence[TombstoneIdentity]
) -> int:
    """How many of `identities` are tombstoned for this owner (primary-key probes)."""
    kinds, hashes = _columns(identities)
    row = conn.execute(
        """SELECT count(*) FROM agent_memory_tombstone t
           JOIN unnest(%s::text[], %s::text[]) AS u(kind, hash)
             ON t.identity_kind = u.kind AND t.identity_hash = u.hash
           WHERE t.agent_id = %s""",
        (kinds, hashes, agent_id),
    ).fetchone()
    return int(row[0]) if row else 0


def release(
    conn: psycopg.Connection, agent_id: str, identities: Sequence[TombstoneIdentity]
) -> int:
    """Delete exactly these tombstones (a user's explicit re-add, R-WRITE-5)."""
    kinds, hashes = _columns(identities)
    return conn.execute(
        """DELETE FROM agent_memory_tombstone t
           USING unnest(%s::text[], %s::text[]) AS u(kind, hash)
           WHERE t.agent_id = %s AND t.identity_kind = u.kind AND t.identity_hash = u.hash""",
        (kinds, hashes, agent_id),
    ).rowcount


def write(
    conn: psycopg.Connection,
    agent_id: str,
    identities: Sequence[TombstoneIdentity],
    *,
    reason: str,
    now: datetime,
) -> int:
    """Insert tombstones (idempotent); returns how many were new."""
    if not identities:
        return 0
    kinds, hashes = _columns(identities)
    return conn.execute(
        """INSERT INTO agent_memory_tombstone
             (agent_id, identity_kind, identity_hash, created_at, reason)
           SELECT %s, u.kind, u.hash, %s, %s FROM unnest(%s::text[], %s::text[]) AS u(kind, hash)
           ON CONFLICT DO NOTHING""",
        (agent_id, now, reason, kinds, hashes),
    ).rowcount


def identities_of(
    agent_id: str,
    *,
    scope_type: object,
    scope_id: object,
    canonical: object,
    provenance: object,
) -> tuple[TombstoneIdentity, ...]:
    """A stored row's identities, from raw column values. A row whose scope pair is
    unreadable is tombstoned by its Agent-scope content identity: that suppresses more,
    never less."""
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
