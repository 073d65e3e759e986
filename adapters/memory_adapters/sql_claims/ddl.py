"""DDL both SQL claim stores share: the claim table in logical types (`claims_table`,
spelt by each dialect's `ColumnSpelling`), the stored temporal and scope
invariants as predicates (R-TIME-1/2, R-SCOPE-1/2), the embedding-identity CHECK and the
claim indexes the kit's statements are written for. Each schema module spells the
dialect's part — column-type checks (SQLite stores any value in any column), its trim and
null-safe equality, its false — and runs these in its own migrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from memory_adapters.sql_claims.queries import recallable, sql_list
from memory_core.domain.claims import Category, ClaimKind, EmbeddingState, Lifecycle
from memory_core.domain.temporal import Precision, TemporalKind

__all__ = [
    "CLAIM_INDEXES",
    "EMBEDDING_IDENTITY_CHECK",
    "POSTGRES_SPELLING",
    "SQLITE_SPELLING",
    "ColumnSpelling",
    "claims_table",
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


class _Column(NamedTuple):
    name: str
    type: str  # a logical type the dialect spells: text, key, real, time, int, big
    rest: str = ""  # NOT NULL / DEFAULT, alike in both dialects
    check: str = ""  # the value rule, without the NULL case
    wrap: bool = False  # the CHECK on a line of its own


class ColumnSpelling(NamedTuple):
    """A dialect's words for the claim table's columns: `types` by logical type (`key` is
    an identifier, compared byte-wise), whether a nullable column's CHECK names the NULL
    case, and whether a NOT NULL `time` (an epoch integer there) must be >= 0."""

    types: Mapping[str, str]
    null_case: bool
    epoch_floor: bool


# Each logical type as the two dialects spell it, side by side (SQLite, PostgreSQL). SQLite's
# are affinities: any value fits any column, so its checks name the NULL case and an epoch
# time must be >= 0; PostgreSQL enforces its types, and compares identifiers byte-wise
# (COLLATE "C") as SQLite does.
_TYPES = {
    "text": ("TEXT", "text"),
    "key": ("TEXT", 'text COLLATE "C"'),
    "real": ("REAL", "double precision"),
    "time": ("INTEGER", "timestamptz"),
    "int": ("INTEGER", "integer"),
    "big": ("INTEGER", "bigint"),
}
SQLITE_SPELLING = ColumnSpelling(
    types={logical: spelt[0] for logical, spelt in _TYPES.items()},
    null_case=True,
    epoch_floor=True,
)
POSTGRES_SPELLING = ColumnSpelling(
    types={logical: spelt[1] for logical, spelt in _TYPES.items()},
    null_case=False,
    epoch_floor=False,
)


# The claim table's columns both dialects declare, in two runs around `source_entry_ids`
# (an array in one dialect, JSON text in the other), which the dialect declares itself.
_BEFORE_SOURCES = (
    _Column("kind", "text", "NOT NULL", f"kind IN {sql_list(ClaimKind)}"),
    _Column("content", "text", "NOT NULL", "length(content) >= 1"),
    _Column("canonical_content", "text", "NOT NULL"),
    _Column("category", "text", check=f"category IN {sql_list(Category)}"),
    _Column("importance", "real", "NOT NULL DEFAULT 0.5", "importance BETWEEN 0 AND 1"),
    _Column("confidence", "real", check="confidence BETWEEN 0 AND 1"),
    _Column("temporal_kind", "text", "NOT NULL DEFAULT 'atemporal'"),
    _Column("valid_from", "time"),
    _Column("valid_until", "time"),
    _Column("temporal_precision", "text"),
    _Column("temporal_timezone", "text"),
    _Column("temporal_confidence", "real"),
    _Column("scope_type", "key", "NOT NULL DEFAULT 'agent'"),
    _Column("scope_id", "key"),
    _Column("user_scope", "key"),
    _Column("provenance_key", "key"),
    _Column("source_session", "text"),
)
_AFTER_SOURCES = (
    _Column("source_first_seq", "big"),
    _Column("source_last_seq", "big"),
    _Column("extractor", "text"),
    _Column(
        "lifecycle_state",
        "text",
        "NOT NULL DEFAULT 'active'",
        f"lifecycle_state IN {sql_list(Lifecycle)}",
    ),
    _Column(
        "embedding_state",
        "text",
        "NOT NULL DEFAULT 'pending'",
        f"embedding_state IN {sql_list(EmbeddingState)}",
        wrap=True,
    ),
    _Column("embedding_provider", "text"),
    _Column("embedding_model", "text"),
    _Column("embedding_dim", "int", check="embedding_dim > 0"),
    _Column("revision", "int", "NOT NULL DEFAULT 1", "revision >= 1"),
    _Column("created_at", "time", "NOT NULL"),
    _Column("updated_at", "time", "NOT NULL"),
    _Column("last_accessed", "time"),
    _Column("access_count", "big", "NOT NULL DEFAULT 0", "access_count >= 0"),
    _Column("superseded_by", "key", check="superseded_by <> id"),
    _Column("slot", "text"),
    _Column("conflict_with", "key"),
    _Column("conflict_state", "text", check="conflict_state = 'challenged'"),
)


def _declare(column: _Column, spelling: ColumnSpelling) -> str:
    check = column.check
    not_null = column.rest.startswith("NOT NULL")
    if not check and not_null and column.type == "time" and spelling.epoch_floor:
        check = f"{column.name} >= 0"
    if check and not not_null and spelling.null_case:
        check = f"{column.name} IS NULL OR {check}"
    words = [column.name, spelling.types[column.type], column.rest]
    line = "  " + " ".join(word for word in words if word)
    if check:
        line += ("\n    " if column.wrap else " ") + f"CHECK ({check})"
    return line + ","


def claims_table(
    spelling: ColumnSpelling, *, keys: str, sources: str, checks: Sequence[str]
) -> str:
    """`CREATE TABLE agent_memory` in `spelling`: the dialect's key column lines (`keys`,
    each ending with a comma), every claim column from `kind` to `conflict_state` with
    `sources` (the dialect's `source_entry_ids` line) in its place, the dialect's table
    `checks`, and the embedding identity check."""
    columns = "\n".join(
        (
            *(_declare(column, spelling) for column in _BEFORE_SOURCES),
            f"  {sources},",
            *(_declare(column, spelling) for column in _AFTER_SOURCES),
        )
    )
    constraints = "".join(f"  {check},\n" for check in checks)
    return f"""
CREATE TABLE agent_memory (
{keys}
{columns}
{constraints}  {EMBEDDING_IDENTITY_CHECK}
)"""
