"""Startup repair of stored temporal and scope metadata (R-TIME-4, R-SCOPE-4), in one
transaction. Only rows that violate an invariant are touched, so a valid row is never
altered; what each one becomes is `memory_core.storage.repair`'s decision.

Candidates are rows with a time-zone name this Python's zoneinfo does not know (SQL cannot
judge that) plus whatever the dialect's predicates find (SQLite: any row failing the
temporal or scope predicate, since its CHECKs cannot cover tables an older schema made;
PostgreSQL: the same only while a constraint is not validated). A scope that cannot be
fixed without widening is deleted — tombstoned and counted when a pending clear covers it.
The clear guard is lifted for this transaction only.

By marker (issue 15): a store's own writes cannot leave a row needing repair (they are
validated, and the schema's CHECKs and triggers hold them), so a clean open does not scan.
The content-free `agent_memory_repair_mark` says when one may be needed — a migration
brought rows from an older schema, the SQLite mirror met a row it could not index, an
operator asked (`request_repair`, e.g. after writing rows behind the store's back) — and is
set in the transaction that causes it, so no crash can lose it; the full repair clears it
as it commits. A time-zone name this Python's zoneinfo does not know (a newer tzdata wrote
it) is found without a scan, through the zone index, and also triggers the full repair.
There is no unclean-shutdown mark: every write is one transaction, and a kill cannot leave
half of one behind.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime
from typing import Any

import attrs

from memory_adapters.sql_claims import audit, tombstones
from memory_adapters.sql_claims.queries import later_of
from memory_adapters.sql_claims.rows import temporal_columns
from memory_adapters.sql_claims.session import Session
from memory_core.domain.errors import TemporalError
from memory_core.domain.temporal import canonical_timezone
from memory_core.ports.claims import RepairReport
from memory_core.storage.repair import is_internal_kind, scope_repair, temporal_repair
from memory_core.storage.tombstones import stored_identities

__all__ = ["MARK_REASONS", "MARK_TABLE_SQL", "mark", "repair"]

_log = logging.getLogger(__name__)
_MAX_SAMPLES = 20
MARK_REASONS = ("upgrade", "mirror", "requested")
MARK_TABLE_SQL = """CREATE TABLE IF NOT EXISTS agent_memory_repair_mark (
  reason TEXT PRIMARY KEY CHECK (reason IN ('upgrade', 'mirror', 'requested'))
)"""
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


def _invalid_zones(session: Session) -> list[str]:
    bad = []
    for zone in session.dialect.zone_names(session):
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


def _delete(session: Session, row: dict[str, Any], tally: _Tally, now: datetime) -> None:
    agent_id = row["agent_id"]
    covered = session.one("SELECT 1 FROM agent_memory_clear_job WHERE agent_id = ?", (agent_id,))
    if covered and not is_internal_kind(row["kind"]):
        identities = stored_identities(
            agent_id,
            scope_type=row["scope_type"],
            scope_id=row["scope_id"],
            canonical=row["canonical_content"],
            provenance=row["provenance_key"],
        )
        tombstones.write(session, agent_id, identities, reason="agent_clear", now=now)
        tally.clear_tombstoned += 1
    if covered:
        session.execute(
            "UPDATE agent_memory_clear_job SET removed_count = removed_count + 1"
            " WHERE agent_id = ?",
            (agent_id,),
        )
    session.execute("DELETE FROM agent_memory WHERE agent_id = ? AND id = ?", (agent_id, row["id"]))
    tally.scope_deleted += 1
    _log.warning("deleted claim %s: its scope cannot be repaired without widening", row["id"])


def _repair_row(
    session: Session, row: dict[str, Any], bad_zones: set[str], tally: _Tally, now: datetime
) -> None:
    updates: dict[str, Any] = {}
    if not row["scope_ok"]:
        fixed = scope_repair(row["scope_type"], row["scope_id"], row["user_scope"])
        if fixed is None:
            _delete(session, row, tally, now)
            tally.touch(row)
            return
        updates.update(attrs.asdict(fixed))
        tally.scope_fixed += 1
    if row["temporal_timezone"] in bad_zones or not row["temporal_ok"]:
        decision = temporal_repair(
            kind=row["kind"],
            temporal_kind=row["temporal_kind"],
            valid_from=row["valid_from"],
            valid_until=row["valid_until"],
            precision=row["temporal_precision"],
            timezone=row["temporal_timezone"],
            confidence=row["temporal_confidence"],
        )
        updates.update(temporal_columns(decision.temporal))
        if decision.archive:
            updates["lifecycle_state"] = "archived"
            tally.temporal_archived += 1
        else:
            tally.internal_normalised += 1
    if updates:
        assignments = ", ".join(f"{column} = ?" for column in updates)
        session.execute(
            f"UPDATE agent_memory SET {assignments}, revision = revision + 1,"
            f" updated_at = {later_of('updated_at')} WHERE agent_id = ? AND id = ?",
            (*updates.values(), now, now, row["agent_id"], row["id"]),
        )
        tally.touch(row)


def mark(session: Session, reason: str) -> None:
    """Mark the store for a full repair at its next start (inside the causing transaction)."""
    if reason not in MARK_REASONS:
        raise ValueError(f"unknown repair mark reason {reason!r}")
    session.execute(
        "INSERT INTO agent_memory_repair_mark (reason) VALUES (?) ON CONFLICT DO NOTHING",
        (reason,),
    )


def repair(session: Session, *, now: datetime) -> RepairReport:
    """Run inside a write transaction: nothing is scanned unless marked (module docstring)."""
    dialect = session.dialect
    bad_zones = set(_invalid_zones(session))
    if not bad_zones and session.one("SELECT 1 FROM agent_memory_repair_mark LIMIT 1") is None:
        return RepairReport()
    # No `finally`: on an error the write transaction rolls back, the lift with it (and a
    # failed PostgreSQL transaction refuses every further statement).
    dialect.lift_guard(session, lifted=True)
    zone_list = ", ".join("?" for _ in bad_zones) or "NULL"
    probe = dialect.repair_probe(session)
    where = [f"temporal_timezone IN ({zone_list})", *probe.predicates]
    candidates = [
        dict(zip((*_COLUMNS, "temporal_ok", "scope_ok"), values, strict=True))
        for values in session.execute(
            f"""SELECT {", ".join(_COLUMNS)}, {probe.temporal_ok}, {probe.scope_ok}
                FROM agent_memory WHERE {" OR ".join(where)}""",
            tuple(sorted(bad_zones)),
        ).fetchall()
    ]
    tally = _Tally()
    for row in candidates:
        _repair_row(session, row, bad_zones, tally, now)
    self_edges = session.changed(
        "DELETE FROM agent_memory_derivation WHERE parent_memory_id = child_memory_id"
    )
    rebuilt = dialect.after_repair(session, touched=bool(candidates))
    for agent_id, touched in tally.per_agent.items():
        audit.record(
            session,
            agent_id=agent_id,
            event="memory/repair",
            actor="system",
            now=now,
            refs={"rows": touched},
        )
    dialect.lift_guard(session, lifted=False)
    session.execute("DELETE FROM agent_memory_repair_mark")
    return RepairReport(
        temporal_archived=tally.temporal_archived,
        internal_normalised=tally.internal_normalised,
        scope_fixed=tally.scope_fixed,
        scope_deleted=tally.scope_deleted,
        clear_tombstoned=tally.clear_tombstoned,
        self_edges_removed=self_edges,
        fts_rebuilt=rebuilt,
        sample_ids=tuple(tally.samples),
    )
