"""How PostgreSQL spells what the SQL kit leaves open (`memory_adapters.sql_claims.Dialect`).

Instants are `timestamptz` (psycopg binds and returns aware datetimes; every session runs
in UTC), lists are `text[]`, audit refs `jsonb`, and psycopg's placeholder is `%s`. Rows a
write will follow are locked `FOR UPDATE`; the owner's advisory lock (the store's `_write`)
serialises its writers. Lexical search reads `content` itself (`fts`): there is no mirror
to keep in step. Repair lifts the clear guard with a transaction-local setting, and checks
the temporal and scope predicates itself only while a constraint is not validated.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from memory_adapters.postgres_store import fts
from memory_adapters.postgres_store.claim_schema import GUARD_SETTING, scope_valid, temporal_valid
from memory_adapters.postgres_store.errors import SCOPE_CONSTRAINT, TEMPORAL_CONSTRAINT
from memory_adapters.sql_claims import RepairProbe, Session
from memory_adapters.sql_claims.lexical import LexicalQuery
from memory_adapters.sql_claims.row_reader import RowReader
from memory_core.domain.temporal import require_utc
from memory_core.ports.claims import FtsHit

__all__ = ["POSTGRES", "PostgresDialect"]

# Distinct zones in O(zones · log n) through agent_memory_timezone.
_DISTINCT_ZONES = """WITH RECURSIVE z(tz) AS (
    SELECT min(temporal_timezone) FROM agent_memory
    UNION ALL
    SELECT (SELECT min(temporal_timezone) FROM agent_memory WHERE temporal_timezone > z.tz)
    FROM z WHERE z.tz IS NOT NULL)
  SELECT tz FROM z WHERE tz IS NOT NULL"""


def _timestamp(value: Any) -> datetime:
    if not isinstance(value, datetime):
        raise TypeError("expected a timestamp")
    return require_utc(value, "timestamp")


def _text_array(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError("expected text[]")
    return tuple(value)


@functools.lru_cache(maxsize=1024)
def _placeholders(text: str) -> str:
    # The kit's statements hold no literal `?` or `%`; escape `%` anyway so one never
    # becomes a placeholder.
    return text.replace("%", "%%").replace("?", "%s")


class PostgresDialect:
    """psycopg PostgreSQL: timestamptz, text[], jsonb, row locks under per-owner locks."""

    audit_refs_column = "refs"
    for_update = " FOR UPDATE"
    row_key, owner_probe = "id", "m.agent_id"
    resolution = timedelta(microseconds=1)  # timestamptz keeps what a datetime holds
    row_reader = RowReader(instant=_timestamp, entry_ids=_text_array)

    def sql(self, text: str) -> str:
        return _placeholders(text)

    def encode(self, value: object) -> object:
        if isinstance(value, tuple):
            return list(value)  # text[]
        return Jsonb(value) if isinstance(value, dict) else value

    def id_list(self, column: str) -> str:
        return f"{column} = ANY(?::text[])"

    def rows_at_once(
        self, session: Session, columns: Sequence[str], tail: str, params: Sequence[object]
    ) -> list[Sequence[Any]]:
        """psycopg reads a result in one round trip: nothing to pack."""
        return session.execute(f"SELECT {', '.join(columns)} {tail}", params).fetchall()

    def mirror_inserted(self, session: Session, agent_id: str, claim_ids: Sequence[str]) -> None:
        """Nothing to mirror: search reads `content` through its trigram index."""

    def search_long(self, session: Session, query: LexicalQuery) -> list[FtsHit]:
        return fts.bm25(session, query)

    def search_short(self, session: Session, query: LexicalQuery) -> list[FtsHit]:
        return fts.short(session, query)

    def begin_clear(self, session: Session, agent_id: str, now: datetime) -> bool:
        statement = "INSERT INTO agent_memory_clear_job (agent_id, created_at) VALUES (?, ?)"
        return (
            session.changed(f"{statement} ON CONFLICT (agent_id) DO NOTHING", (agent_id, now)) > 0
        )

    def lift_guard(self, session: Session, *, lifted: bool) -> None:
        # Transaction-local: a rollback restores the guard by itself.
        session.execute("SELECT set_config(?, ?, true)", (GUARD_SETTING, "on" if lifted else "off"))

    def zone_names(self, session: Session) -> list[str]:
        return [zone for (zone,) in session.execute(_DISTINCT_ZONES)]

    def repair_probe(self, session: Session) -> RepairProbe:
        validated = session.one(
            """SELECT count(*) FROM pg_constraint
               WHERE conrelid = 'agent_memory'::regclass AND conname = ANY(?) AND convalidated""",
            ([TEMPORAL_CONSTRAINT, SCOPE_CONSTRAINT],),
        )
        temporal_ok, scope_ok = temporal_valid(), scope_valid()
        # Validated CHECKs leave nothing for SQL to find; one added NOT VALID might.
        trusted = validated is not None and validated[0] >= 2
        predicates = () if trusted else (f"NOT {temporal_ok}", f"NOT {scope_ok}")
        return RepairProbe(temporal_ok=temporal_ok, scope_ok=scope_ok, predicates=predicates)

    def after_repair(self, session: Session, *, touched: bool) -> bool:
        return False  # no mirror to rebuild


POSTGRES = PostgresDialect()
