"""Startup repair of stored temporal and scope metadata (R-TIME-4, R-SCOPE-4).

Runs in one transaction. Only rows that violate an invariant are touched, so a valid row is
never altered. Temporal: corrupt fields are normalised leniently and the claim archived, so
a broken interval never becomes a permanent atemporal fact; persona/working rows become
atemporal. Scope, never widening: Agent rows drop a stray scope id or shadow; User rows
resync the shadow from a valid scope id or recover the id from a valid shadow; Project and
Session rows drop a stray shadow; anything else narrow is deleted (tombstoned and counted
when a pending clear covers it). The clear guard is lifted for this transaction only, by a
suspension row that is deleted before commit.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

import apsw
import attrs

from memory_adapters.sqlite_store import audit, fts, tombstones
from memory_adapters.sqlite_store.rows import to_ms
from memory_adapters.sqlite_store.schema import recallable, scope_valid, temporal_valid
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
    "rid",
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
    interval = meta.interval
    return {
        "temporal_kind": meta.kind.value,
        "valid_from": None if interval.valid_from is None else to_ms(interval.valid_from),
        "valid_until": None if interval.valid_until is None else to_ms(interval.valid_until),
        "temporal_precision": meta.precision.value if meta.precision else None,
        "temporal_timezone": meta.timezone,
        "temporal_confidence": meta.confidence,
    }


def _invalid_zones(conn: apsw.Connection) -> list[str]:
    zones = [
        zone
        for (zone,) in conn.execute(
            "SELECT DISTINCT temporal_timezone FROM agent_memory"
            " WHERE typeof(temporal_timezone) = 'text'"
        )
    ]
    bad = []
    for zone in zones:
        try:
            canonical_timezone(zone)
        except TemporalError:
            bad.append(zone)
    return bad


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


def _delete(conn: apsw.Connection, row: dict[str, Any], tally: _Tally, now_ms: int) -> None:
    agent_id = row["agent_id"]
    covered = conn.execute(
        "SELECT 1 FROM agent_memory_clear_job WHERE agent_id = ?", (agent_id,)
    ).fetchone()
    if covered and row["kind"] not in _INTERNAL_KINDS:
        identities = tombstones.identities_of(
            agent_id,
            scope_type=row["scope_type"],
            scope_id=row["scope_id"],
            canonical=row["canonical_content"],
            provenance=row["provenance_key"],
        )
        tombstones.write(conn, agent_id, identities, reason="agent_clear", now_ms=now_ms)
        tally.clear_tombstoned += 1
    if covered:
        conn.execute(
            "UPDATE agent_memory_clear_job SET removed_count = removed_count + 1"
            " WHERE agent_id = ?",
            (agent_id,),
        )
    conn.execute("DELETE FROM agent_memory WHERE rid = ?", (row["rid"],))
    tally.scope_deleted += 1
    _log.warning("deleted claim %s: its scope cannot be repaired without widening", row["id"])


def _repair_row(
    conn: apsw.Connection, row: dict[str, Any], bad_zones: set[str], tally: _Tally, now_ms: int
) -> None:
    updates: dict[str, Any] = {}
    scope_ok = bool(
        conn.execute(
            f"SELECT {scope_valid()} FROM agent_memory WHERE rid = ?", (row["rid"],)
        ).fetchone()[0]
    )
    if not scope_ok:
        fixed = _scope_fix(row)
        if fixed is None:
            _delete(conn, row, tally, now_ms)
            tally.touch(row)
            return
        updates.update(zip(("scope_type", "scope_id", "user_scope"), fixed, strict=True))
        tally.scope_fixed += 1
    temporal_ok = row["temporal_timezone"] not in bad_zones and bool(
        conn.execute(
            f"SELECT {temporal_valid()} FROM agent_memory WHERE rid = ?", (row["rid"],)
        ).fetchone()[0]
    )
    if not temporal_ok:
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
        assignments = ", ".join(f"{column} = :{column}" for column in updates)
        conn.execute(
            f"UPDATE agent_memory SET {assignments}, revision = revision + 1,"
            " updated_at = max(updated_at, :now) WHERE rid = :rid",
            {**updates, "now": now_ms, "rid": row["rid"]},
        )
        tally.touch(row)


def repair(conn: apsw.Connection, *, now_ms: int) -> RepairReport:
    """Run inside a write transaction."""
    conn.execute("INSERT INTO agent_memory_guard_suspension (token) VALUES (1)")
    try:
        bad_zones = set(_invalid_zones(conn))
        zone_list = ", ".join("?" for _ in bad_zones) or "NULL"
        candidates = [
            dict(zip(_COLUMNS, values, strict=True))
            for values in conn.execute(
                f"""SELECT {", ".join(_COLUMNS)} FROM agent_memory
                    WHERE NOT {temporal_valid()} OR NOT {scope_valid()}
                       OR temporal_timezone IN ({zone_list})""",
                tuple(bad_zones),
            ).fetchall()
        ]
        tally = _Tally()
        for row in candidates:
            _repair_row(conn, row, bad_zones, tally, now_ms)
        conn.execute("DELETE FROM agent_memory_derivation WHERE parent_memory_id = child_memory_id")
        self_edges = conn.changes()
        (recallable_count,) = conn.execute(
            f"SELECT count(*) FROM agent_memory WHERE {recallable()}"
        ).fetchone()
        (mirrored,) = conn.execute("SELECT count(*) FROM agent_memory_fts").fetchone()
        # A raw writer may have bypassed the mirror's triggers; re-derive it when in doubt.
        rebuild = bool(candidates) or recallable_count != mirrored
        if rebuild:
            fts.rebuild(conn)
        for agent_id, touched in tally.per_agent.items():
            audit.record(
                conn,
                agent_id=agent_id,
                event="memory/repair",
                actor="system",
                now_ms=now_ms,
                refs={"rows": touched},
            )
    finally:
        conn.execute("DELETE FROM agent_memory_guard_suspension")
    return RepairReport(
        temporal_archived=tally.temporal_archived,
        internal_normalised=tally.internal_normalised,
        scope_fixed=tally.scope_fixed,
        scope_deleted=tally.scope_deleted,
        clear_tombstoned=tally.clear_tombstoned,
        self_edges_removed=self_edges,
        fts_rebuilt=rebuild,
        sample_ids=tuple(tally.samples),
    )
