"""DDL both SQL claim stores share: the stored temporal and scope invariants as predicates
(R-TIME-1/2, R-SCOPE-1/2), the embedding-identity CHECK and the claim indexes the kit's
statements are written for. Each schema module spells the dialect's part — column-type
checks (SQLite stores any value in any column), its trim and null-safe equality, its false —
and runs these in its own migrations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memory_adapters.sql_claims.queries import recallable, sql_list
from memory_core.domain.temporal import Precision, TemporalKind

__all__ = [
    "CLAIM_INDEXES",
    "EMBEDDING_IDENTITY_CHECK",
    "live_slot_index",
    "scope_predicate",
    "temporal_predicate",
]

_TIMED_KINDS = sql_list(kind for kind in TemporalKind if kind is not TemporalKind.ATEMPORAL)


def temporal_predicate(
    p: str, *, trim: Callable[[str], str], typed: Sequence[str], false: str
) -> str:
    """Atemporal carries nothing; other kinds carry precision, zone and confidence, with a
    non-empty interval when both bounds are known. NULL counts as invalid (`false`)."""
    checks = "".join(f"\n        AND {check}" for check in typed)
    zone = f"{p}temporal_timezone"
    return f"""COALESCE((
      ({p}temporal_kind = 'atemporal' AND {p}valid_from IS NULL AND {p}valid_until IS NULL
        AND {p}temporal_precision IS NULL AND {zone} IS NULL
        AND {p}temporal_confidence IS NULL)
      OR ({p}temporal_kind IN {_TIMED_KINDS}
        AND {p}temporal_precision IN {sql_list(Precision)}
        AND length({zone}) BETWEEN 1 AND 128 AND {zone} = {trim(zone)}
        AND {p}temporal_confidence BETWEEN 0 AND 1{checks}
        AND ({p}valid_from IS NULL OR {p}valid_until IS NULL OR {p}valid_from < {p}valid_until))
    ), {false})"""


def scope_predicate(
    p: str,
    *,
    trim: Callable[[str], str],
    same: Callable[[str, str], str],
    typed: Sequence[str],
    false: str,
) -> str:
    """Agent ⇔ no scope id; the legacy shadow mirrors a User scope id only; ids are trimmed
    and at most 256 code points."""
    checks = "".join(f"\n        AND {check}" for check in typed)
    scope_id, shadow = f"{p}scope_id", f"{p}user_scope"
    return f"""COALESCE((
      ({p}scope_type = 'agent' AND {scope_id} IS NULL AND {shadow} IS NULL)
      OR ({p}scope_type IN ('user', 'project', 'session'){checks}
        AND length({scope_id}) BETWEEN 1 AND 256 AND {scope_id} = {trim(scope_id)}
        AND CASE {p}scope_type WHEN 'user' THEN {same(shadow, scope_id)}
                              ELSE {shadow} IS NULL END)
    ), {false})"""


EMBEDDING_IDENTITY_CHECK = """CHECK (embedding_state <> 'ready'
         OR (embedding_provider IS NOT NULL AND embedding_model IS NOT NULL
             AND embedding_dim IS NOT NULL))"""

CLAIM_INDEXES = (
    """CREATE UNIQUE INDEX agent_memory_provenance
         ON agent_memory (agent_id, provenance_key) WHERE provenance_key IS NOT NULL""",
    "CREATE INDEX agent_memory_listing ON agent_memory (agent_id, created_at DESC, id DESC)",
    # The LIKE fallback's per-scope slices and scoped listing.
    f"""CREATE INDEX agent_memory_scoped_recall
         ON agent_memory (agent_id, scope_type, scope_id, importance DESC, created_at DESC, id)
         WHERE {recallable()}""",
    f"""CREATE INDEX agent_memory_pending_embedding
         ON agent_memory (agent_id, created_at, id)
         WHERE embedding_state = 'pending' AND {recallable()}""",
)


def live_slot_index() -> str:
    """The decision step's slot lookup (`find_live_by_slot`): live rows only, so its size
    follows the slotted facts that are current, not the history (SQLite schema v4,
    PostgreSQL claims v2)."""
    return f"""CREATE INDEX IF NOT EXISTS agent_memory_live_slot
         ON agent_memory (agent_id, scope_type, scope_id, slot, created_at DESC, id DESC)
         WHERE slot IS NOT NULL AND {recallable()}"""


# The persona lifecycle of `kind = 'persona'` rows (reference §8.6); NULL for every other row.
PERSONA_STATE_COLUMN = (
    "ALTER TABLE agent_memory ADD COLUMN persona_state TEXT CHECK (persona_state IS NULL"
    " OR persona_state IN ('draft', 'active', 'rejected', 'retired'))"
)
