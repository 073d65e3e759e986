"""Startup repair of stored temporal and scope metadata (R-TIME-4, R-SCOPE-4), one transaction.

PostgreSQL enforces the temporal and scope predicates as validated CHECK constraints, so
what a raw writer can still leave behind is what SQL cannot judge: a time-zone name this
Python's zoneinfo does not know. Those rows are found through the time-zone index (a loose
scan over distinct zones, not a table scan), normalised leniently and archived — persona and
working rows become atemporal — so a broken interval never becomes a permanent fact. Should
a constraint ever be present but not validated (a future migration adding it NOT VALID),
the predicate scan of the SQLite store runs too, with its never-widening scope repair; the
clear guard is lifted for this transaction only, by a transaction-local setting.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime
from typing import Any

import attrs
import psycopg

from memory_adapters.postgres_store import audit, tombstones
from memory_adapters.postgres_store.claim_schema import GUARD_SETTING, scope_valid, temporal_valid
from memory_adapters.postgres_store.errors import SCOPE_CONSTRAINT, TEMPORAL_CONSTRAINT
from memory_core.domain.claims import ClaimKind
from memory_core.domain.errors import TemporalError
from memory_core.domain.scope import MAX_SCOPE_ID_LENGTH, ScopeKind
from memory_core.domain.temporal import ATEMPORAL, TemporalMetadata, canonical_timezone
from memory_core.domain.temporal_policy import lenient_normalise
from memory_core.ports.claims import RepairReport

__all__ = ["repair"]

_log = logging.getLogger(__name__)
_MAX_SAMPLES = 20
_INTERNAL_KINDS = frozenset(kind.value for kind in ClaimKind if kind.is_internal)
_COLUMNS = (
    "id",
    "agent_id",
    "kind",
    "temporal_kind",
    "valid_from",
    "valid_until",
    "temporal_precision",
    "temporal_timezone",
    "temporal_confidence",
    "scope_type",
    "scope_id",
    "user_scope",
    "canonical_content",
    "provenance_key",
)
# Distinct zones in O(zones · log n) through agent_memory_timezone.
_DISTINCT_ZONES = """WITH RECURSIVE z(tz) AS (
    SELECT min(temporal_timezone) FROM agent_memory
    UNION ALL
    SELECT (SELECT min(temporal_timezone) FROM agent_memory WHERE temporal_timezone > z.tz)
    FROM z WHERE z.tz IS NOT NULL)
  SELECT tz FROM z WHERE tz IS NOT NULL"""


def _valid_scope_id(value: object) -> bool:
    return (
        isinstance(value, str) and 1 <= len(value) <= MAX_SCOPE_ID_LENGTH and value == value.strip()
    )


def _scope_fix(row: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    """The repaired (scope_type, scope_id, user_scope), or None when only deletion is safe."""
    kind, scope_id, shadow = row["scope_type"], row["scope_id"], row["user_scope"]
    if kind == ScopeKind.AGENT.value:
        return kind, None, None  # already the widest scope: dropping strays narrows nothing
    if kind == ScopeKind.USER.value:
        if _valid_scope_id(scope_id):
            return kind, scope_id, scope_id
        if _valid_scope_id(shadow):
            return kind, shadow, shadow
        return None
    if kind in (ScopeKind.PROJECT.value, ScopeKind.SESSION.value) and _valid_scope_id(scope_id):
        return kind, scope_id, None
    return None


def _temporal_columns(meta: TemporalMetadata) -> dict[str, Any]:
    return {
        "temporal_kind": meta.kind.value,
        "valid_from": meta.interval.valid_from,
        "valid_until": meta.interval.valid_until,
        "temporal_precision": meta.precision.value if meta.precision else None,
        "temporal_timezone": meta.timezone,
        "temporal_confidence": meta.confidence,
    }


def _invalid_zones(conn: psycopg.Connection) -> list[str]:
    bad = []
    for (zone,) in conn.execute(_DISTINCT_ZONES):
        try:
            canonical_timezone(zone)
        except TemporalError:
            bad.append(zone)
    return bad


def _unvalidated_constraints(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        """SELECT count(*) FROM pg_constraint
           WHERE conrelid = 'agent_memory'::regclass AND conname = ANY(%s) AND convalidated""",
        ([TEMPORAL_CONSTRAINT, SCOPE_CONSTRAINT],),
    ).fetchone()
    return row is None or row[0] < 2


@attrs.define
class _Tally:
    temporal_archived: int = 0
    internal_normalised: int = 0
    scope_fixed: int = 0
    scope_deleted: int = 0
    clear_tombstoned: int = 0
    samples: list[str] = attrs.Factory(list)
    per_agent: dict[str, int] = attrs.Factory(lambda: defaultdict(int))

    def touch(self, row: dict[str, Any]) -> None:
        self.per_agent[row["agent_id"]] += 1
        if len(self.samples) < _MAX_SAMPLES and row["id"] not in self.samples:
            self.samples.append(str(row["id"]))


def _delete(conn: psycopg.Connection, row: dict[str, Any], tally: _Tally, now: datetime) -> None:
    agent_id = row["agent_id"]
    covered = conn.execute(
        "SELECT 1 FROM agent_memory_clear_job WHERE agent_id = %s", (agent_id,)
    ).fetchone()
    if covered and row["kind"] not in _INTERNAL_KINDS:
        identities = tombstones.identities_of(
            agent_id,
            scope_type=row["scope_type"],
            scope_id=row["scope_id"],
            canonical=row["canonical_content"],
            provenance=row["provenance_key"],
        )
        tombstones.write(conn, agent_id, identities, reason="agent_clear", now=now)
        tally.clear_tombstoned += 1
    if covered:
        conn.execute(
            "UPDATE agent_memory_clear_job SET removed_count = removed_count + 1"
            " WHERE agent_id = %s",
            (agent_id,),
        )
    conn.execute("DELETE FROM agent_memory WHERE agent_id = %s AND id = %s", (agent_id, row["id"]))
    tally.scope_deleted += 1
    _log.warning("deleted claim %s: its scope cannot be repaired without widening", row["id"])


def _repair_row(
    conn: psycopg.Connection, row: dict[str, Any], bad_zones: set[str], tally: _Tally, now: datetime
) -> None:
    updates: dict[str, Any] = {}
    if not row["scope_ok"]:
        fixed = _scope_fix(row)
        if fixed is None:
            _delete(conn, row, tally, now)
            tally.touch(row)
            return
        updates.update(zip(("scope_type", "scope_id", "user_scope"), fixed, strict=True))
        tally.scope_fixed += 1
    if row["temporal_timezone"] in bad_zones or not row["temporal_ok"]:
        if row["kind"] in _INTERNAL_KINDS:
            updates.update(_temporal_columns(ATEMPORAL))
            tally.internal_normalised += 1
        else:
            meta, _was_corrupt = lenient_normalise(
                kind=row["temporal_kind"],
                valid_from=row["valid_from"],
                valid_until=row["valid_until"],
                confidence=row["temporal_confidence"],
                precision=row["temporal_precision"],
                timezone=row["temporal_timezone"],
            )
            updates.update(_temporal_columns(meta))
            updates["lifecycle_state"] = "archived"
            tally.temporal_archived += 1
    if updates:
        assignments = ", ".join(f"{column} = %({column})s" for column in updates)
        conn.execute(
            f"UPDATE agent_memory SET {assignments}, revision = revision + 1,"
            " updated_at = greatest(updated_at, %(now)s)"
            " WHERE agent_id = %(agent)s AND id = %(id)s",
            {**updates, "now": now, "agent": row["agent_id"], "id": row["id"]},
        )
        tally.touch(row)


def repair(conn: psycopg.Connection, *, now: datetime) -> RepairReport:
    """Run inside a write transaction."""
    conn.execute("SELECT set_config(%s, 'on', true)", (GUARD_SETTING,))
    bad_zones = set(_invalid_zones(conn))
    where = ["temporal_timezone = ANY(%s::text[])"]
    if _unvalidated_constraints(conn):
        where += [f"NOT {temporal_valid()}", f"NOT {scope_valid()}"]
    candidates = [
        dict(zip((*_COLUMNS, "temporal_ok", "scope_ok"), values, strict=True))
        for values in conn.execute(
            f"""SELECT {", ".join(_COLUMNS)}, {temporal_valid()}, {scope_valid()}
                FROM agent_memory WHERE {" OR ".join(where)}""",
            (sorted(bad_zones),),
        ).fetchall()
    ]
    tally = _Tally()
    for row in candidates:
        _repair_row(conn, row, bad_zones, tally, now)
    for agent_id, touched in tally.per_agent.items():
        audit.record(
            conn,
            agent_id=agent_id,
            event="memory/repair",
            actor="system",
            now=now,
            refs={"rows": touched},
        )
    conn.execute("SELECT set_config(%s, 'off', true)", (GUARD_SETTING,))
    return RepairReport(
        temporal_archived=tally.temporal_archived,
        internal_normalised=tally.internal_normalised,
        scope_fixed=tally.scope_fixed,
        scope_deleted=tally.scope_deleted,
        clear_tombstoned=tally.clear_tombstoned,
        sample_ids=tuple(tally.samples),
    )
