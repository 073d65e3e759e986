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
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from memory_core.ports.claims import FtsHit

if TYPE_CHECKING:
    from memory_adapters.sql_claims.lexical import LexicalQuery
    from memory_adapters.sql_claims.row_reader import RowReader

__all__ = ["Connection", "Cursor", "Dialect", "RepairProbe", "Session"]

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
    # Appended to a SELECT that a write will follow, where rows can be locked.
    for_update: str
    # The owner predicate of id-list lookups (SQLite's `+` keeps the planner on the id key).
    owner_probe: str
    # The audit table's JSON column.
    audit_refs_column: str
    # The precision instants are stored at; `now` is cut to it before a write.
    resolution: timedelta
    # Reads rows (and bare instants) as the columns store them.
    row_reader: RowReader

    def sql(self, text: str) -> str:
        """`text` with `?` placeholders in this driver's style."""
        ...

    def encode(self, value: object) -> object:
        """A bound value as its column stores it."""
        ...

    def id_list(self, column: str) -> str:
        """`column` is one of the ids bound (as a sequence) to a single placeholder."""
        ...

    def rows_at_once(
        self, session: Session, columns: Sequence[str], tail: str, params: Sequence[object]
    ) -> list[Row]:
        """The rows of `SELECT {columns} {tail}`, in its order, fetched in one step where the
        driver would otherwise step row by row with the GIL released and taken back each
        time: while another thread runs Python, each take-back waits out a switch interval,
        and a hundred-row read on the loop took 40 ms for 2 ms of work (issue 15)."""
        ...

    def mirror_inserted(self, session: Session, agent_id: str, claim_ids: Sequence[str]) -> None:
        """Index the agent's recallable rows `claim_ids`, just inserted in this transaction,
        where the lexical index is a separate mirror (once per batch, after its rows)."""
        ...

    def search_long(self, session: Session, query: LexicalQuery) -> list[FtsHit]:
        """Ranked hits for terms the index serves; in ALL mode short terms narrow them."""
        ...

    def search_short(self, session: Session, query: LexicalQuery) -> list[FtsHit]:
        """The bounded fallback for terms too short for the index, ranked 0.0."""
        ...

    def begin_clear(self, session: Session, agent_id: str, now: datetime) -> bool:
        """Insert the agent's clear job unless one exists; True when this call created it."""
        ...

    def lift_guard(self, session: Session, *, lifted: bool) -> None:
        """Lift (or restore) the clear guard for this transaction only: repair deletes
        rows of fenced agents."""
        ...

    def zone_names(self, session: Session) -> list[str]:
        """The distinct time-zone names stored, for repair to check against zoneinfo."""
        ...

    def repair_probe(self, session: Session) -> RepairProbe:
        """How repair judges rows in SQL: the validity expressions and which rows beyond a
        bad zone are candidates."""
        ...

    def after_repair(self, session: Session, *, touched: bool) -> bool:
        """Bring the lexical mirror back in step; True when it was rebuilt."""
        ...


@attrs.frozen(kw_only=True)
class RepairProbe:
    temporal_ok: str  # SQL expression: the row's temporal columns are valid
    scope_ok: str  # SQL expression: the row's scope columns are valid
    predicates: tuple[str, ...]  # rows matching any of these are repair candidates


@attrs.frozen
class Session:
    """One transaction's connection and its dialect."""

    conn: Connection
    dialect: Dialect

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        encode = self.dialect.encode
        return self.conn.execute(self.dialect.sql(sql), tuple(encode(value) for value in params))

    def changed(self, sql: str, params: Sequence[object] = ()) -> int:
        """Execute an INSERT/UPDATE/DELETE and return how many rows it changed (counted
        through RETURNING, which apsw and psycopg read alike)."""
        return len(self.execute(f"{sql} RETURNING 1", params).fetchall())

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        return self.execute(sql, params).fetchone()

    def instant(self, value: object) -> datetime:
        """A stored instant read outside a row (job and lineage timestamps)."""
        return self.dialect.row_reader.instant(value)
