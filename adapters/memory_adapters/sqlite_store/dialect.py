"""How SQLite spells what the SQL kit leaves open (`memory_adapters.sql_claims.Dialect`).

Instants are epoch milliseconds in INTEGER columns, lists are JSON text (`json_each` reads
an id list bound as one parameter), `?` is apsw's own placeholder, and there is no row
locking: a write transaction is `BEGIN IMMEDIATE`, the single writer. The lexical index is
the FTS5 mirror (`fts`); the clear job records the rowid cutoff of the agent's rows; repair
lifts the clear guard with a suspension row, checks the temporal and scope predicates
itself (an older schema's table has no CHECKs) and re-derives the mirror when in doubt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import apsw

from memory_adapters.sql_claims import RepairProbe, Session
from memory_adapters.sql_claims.lexical import LexicalQuery
from memory_adapters.sql_claims.queries import recallable
from memory_adapters.sql_claims.row_reader import RowReader
from memory_adapters.sqlite_store import fts, schema
from memory_core.domain.temporal import require_utc
from memory_core.ports.claims import FtsHit

__all__ = ["SQLITE", "SqliteDialect", "from_ms", "to_ms"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_BOUND_AS_IS = frozenset({str, int, float})  # exact types: a bool or an enum takes the long way


def to_ms(value: datetime) -> int:
    """Epoch milliseconds of an aware datetime (sub-millisecond precision is dropped)."""
    return (require_utc(value, "datetime") - _EPOCH) // _MS


def from_ms(value: int) -> datetime:
    return _EPOCH + timedelta(0, 0, 0, value)  # positional milliseconds: the cheaper call


def _stored_ms(value: Any) -> datetime:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("expected epoch milliseconds")
    return from_ms(value)


def _stored_ids(value: Any) -> tuple[str, ...]:
    if not isinstance(value, str):
        raise TypeError("expected a JSON array")
    if value == "[]":
        return ()  # most claims have no entry ids: no parse
    ids = json.loads(value)
    if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
        raise TypeError("expected a JSON array of ids")
    return tuple(ids)


class SqliteDialect:
    """apsw SQLite: one writer, epoch milliseconds, JSON lists, an FTS5 mirror."""

    row_reader = RowReader(instant=_stored_ms, entry_ids=_stored_ids)
    resolution = _MS
    audit_refs_column = "refs_json"
    # `+` keeps the planner off the (agent_id, ...) indexes: walking every row of the agent
    # to test it against a short id list cost 66 ms at 1M claims; probing the id key costs
    # microseconds.
    owner_probe = "+m.agent_id"
    row_key = "rid"  # clear batches walk an agent's rows in rowid order (its index's order)
    for_update = ""  # BEGIN IMMEDIATE already holds the only write lock

    def sql(self, text: str) -> str:
        return text  # apsw's own placeholder

    def encode(self, value: object) -> object:
        # Most bound values are text, numbers or NULL, bound as they are: answered before the
        # isinstance checks (an insert encodes each of a row's 37 columns, issue 15).
        if value is None or type(value) in _BOUND_AS_IS:
            return value
        if isinstance(value, datetime):
            return to_ms(value)
        if isinstance(value, dict):
            return json.dumps(value)
        return json.dumps(list(value)) if isinstance(value, list | tuple) else value

    def id_list(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(?))"

    def rows_at_once(
        self, session: Session, columns: Sequence[str], tail: str, params: Sequence[object]
    ) -> list[tuple[Any, ...]]:
        # apsw releases the GIL around every sqlite3_step: one aggregate row, one step. The
        # values are text, integers, reals or NULL, which JSON carries as they are.
        inner = ", ".join(f"{column} AS c{n}" for n, column in enumerate(columns))
        packed = ", ".join(f"c{n}" for n in range(len(columns)))
        row = session.one(
            f"SELECT json_group_array(json_array({packed})) FROM (SELECT {inner} {tail})",
            params,
        )
        return [] if row is None else [tuple(values) for values in json.loads(row[0])]

    def mirror_inserted(self, session: Session, agent_id: str, claim_ids: Sequence[str]) -> None:
        conn: apsw.Connection = session.conn  # type: ignore[assignment]
        fts.mirror_inserted(conn, agent_id, claim_ids)

    def search_long(self, session: Session, query: LexicalQuery) -> list[FtsHit]:
        return fts.ranked(session, query)

    def search_short(self, session: Session, query: LexicalQuery) -> list[FtsHit]:
        return fts.short(session, query)

    def begin_clear(self, session: Session, agent_id: str, now: datetime) -> bool:
        inserted = session.changed(
            """INSERT INTO agent_memory_clear_job (agent_id, cutoff_rowid, created_at)
               SELECT ?, COALESCE(max(rid), 0), ? FROM agent_memory WHERE agent_id = ?
               ON CONFLICT (agent_id) DO NOTHING""",
            (agent_id, now, agent_id),
        )
        return inserted > 0

    def lift_guard(self, session: Session, *, lifted: bool) -> None:
        # A suspension row exists only inside the repair transaction that wrote it.
        if lifted:
            session.execute("INSERT INTO agent_memory_guard_suspension (token) VALUES (1)")
        else:
            session.execute("DELETE FROM agent_memory_guard_suspension")

    def zone_names(self, session: Session) -> list[str]:
        # A skip-scan of the zone index (schema v9): one probe per distinct name, so a
        # clean open's repair reads no row (issue 15).
        rows = session.execute(
            """WITH RECURSIVE z(tz) AS (
                 SELECT min(temporal_timezone) FROM agent_memory
                 UNION ALL
                 SELECT (SELECT min(temporal_timezone) FROM agent_memory
                         WHERE temporal_timezone > z.tz)
                 FROM z WHERE z.tz IS NOT NULL)
               SELECT tz FROM z WHERE typeof(tz) = 'text'"""
        )
        return [zone for (zone,) in rows]

    def repair_probe(self, session: Session) -> RepairProbe:
        # A table an older schema created has no CHECKs: every row is judged in SQL.
        temporal_ok, scope_ok = schema.temporal_valid(), schema.scope_valid()
        return RepairProbe(
            temporal_ok=temporal_ok,
            scope_ok=scope_ok,
            predicates=(f"NOT {temporal_ok}", f"NOT {scope_ok}"),
        )

    def after_repair(self, session: Session, *, touched: bool) -> bool:
        conn: apsw.Connection = session.conn  # type: ignore[assignment]
        claims = {
            fts.owner_table(agent): count
            for agent, count in session.execute(
                f"SELECT agent_id, count(*) FROM agent_memory WHERE {recallable()}"
                " AND agent_id NOT IN (SELECT agent_id FROM agent_memory_clear_job)"
                " GROUP BY agent_id"
            )
        }
        # A raw writer may have bypassed the mirror; re-derive it when in doubt.
        rebuild = touched or fts.mirror_counts(conn) != claims
        if rebuild:
            fts.rebuild(conn)
        return rebuild


SQLITE = SqliteDialect()
