"""What the SQL kit needs from a database: a connection that executes, a dialect that says
how this database spells what differs, and the `Session` that joins them for one
transaction.

Statements in the kit are written once with `?` placeholders and bound with domain values
(aware datetimes, tuples of ids, dicts of audit refs); the dialect rewrites the placeholder
and encodes each value the way its columns store it. Both apsw and psycopg connections
already satisfy `Connection`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs
import cattrs

from memory_core.domain.scope import ScopeFilter
from memory_core.ports.claims import FtsHit

__all__ = ["Connection", "Cursor", "Dialect", "Session"]

Row = Sequence[Any]


class Cursor(Protocol):
    def fetchone(self) -> Row | None: ...

    def fetchall(self) -> list[Row]: ...

    def __iter__(self) -> Iterator[Row]: ...


class Connection(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ...) -> Cursor: ...


class Dialect(Protocol):
    """How one database spells what the kit's statements leave open."""

    # The column a clear batch orders and deletes by: the rowid on SQLite, the id elsewhere.
    row_key: str
    # Scalar two-argument maximum: `max` in SQLite, `greatest` in PostgreSQL.
    greatest: str
    # Appended to a SELECT that a write will follow, where rows can be locked.
    for_update: str
    # The owner predicate of id-list lookups (SQLite's `+` keeps the planner on the id key).
    owner_probe: str
    # The audit table's JSON column.
    audit_refs_column: str
    row_converter: cattrs.Converter

    def sql(self, text: str) -> str:
        """`text` with `?` placeholders in this driver's style."""
        ...

    def encode(self, value: object) -> object:
        """A bound value as its column stores it."""
        ...

    def decode_time(self, value: Any) -> datetime:
        """A stored instant read outside a row converter."""
        ...

    def stamp(self, now: datetime) -> datetime:
        """`now` at the precision this database keeps instants."""
        ...

    def id_list(self, column: str) -> str:
        """`column` is one of the ids bound (as a sequence) to a single placeholder."""
        ...

    def changes(self, conn: Connection, cursor: Cursor) -> int:
        """Rows the statement that produced `cursor` changed."""
        ...

    def temporal_valid(self, prefix: str = "") -> str: ...

    def scope_valid(self, prefix: str = "") -> str: ...

    # --- lexical search and its mirror -----------------------------------------------
    def mirror_insert(self, session: Session, content: str, agent_id: str) -> None:
        """Index the row just inserted, where the lexical index is a separate mirror."""
        ...

    def search_long(
        self,
        session: Session,
        agent_id: str,
        long_terms: Sequence[str],
        short_terms: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        limit: int,
        all_terms: bool,
    ) -> list[FtsHit]:
        """Ranked hits for terms the index serves; in ALL mode short terms narrow them."""
        ...

    def search_short(
        self,
        session: Session,
        agent_id: str,
        short_terms: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        limit: int,
        all_terms: bool,
    ) -> list[FtsHit]:
        """The bounded fallback for terms too short for the index, ranked 0.0."""
        ...

    # --- clear jobs and repair -------------------------------------------------------
    def begin_clear(self, session: Session, agent_id: str, now: datetime) -> bool:
        """Insert the agent's clear job unless one exists; True when this call created it."""
        ...

    def suspend_guard(self, session: Session) -> None:
        """Lift the clear guard for this transaction only (repair deletes fenced rows)."""
        ...

    def resume_guard(self, session: Session) -> None: ...

    def invalid_zone_candidates(self, session: Session) -> list[str]:
        """The distinct time-zone names stored, for repair to check against zoneinfo."""
        ...

    def repair_predicates(self, session: Session) -> list[str]:
        """Predicates beyond a bad zone that make a row a repair candidate."""
        ...

    def after_repair(self, session: Session, *, touched: bool) -> bool:
        """Bring the lexical mirror back in step; True when it was rebuilt."""
        ...


@attrs.frozen
class Session:
    """One transaction's connection and its dialect."""

    conn: Connection
    dialect: Dialect

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        encode = self.dialect.encode
        return self.conn.execute(self.dialect.sql(sql), tuple(encode(value) for value in params))

    def changed(self, sql: str, params: Sequence[object] = ()) -> int:
        """Execute and return how many rows the statement changed."""
        return self.dialect.changes(self.conn, self.execute(sql, params))

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        return self.execute(sql, params).fetchone()
