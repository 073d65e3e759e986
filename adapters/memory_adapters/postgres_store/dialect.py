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
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from memory_adapters.postgres_store import fts
from memory_adapters.postgres_store.claim_schema import GUARD_SETTING, scope_valid, temporal_valid
from memory_adapters.postgres_store.errors import SCOPE_CONSTRAINT, TEMPORAL_CONSTRAINT
from memory_adapters.sql_claims import Session
from memory_adapters.sql_claims.rows import row_converter as make_converter
from memory_core.domain.scope import ScopeFilter
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
    row_key = "id"
    greatest = "greatest"
    for_update = " FOR UPDATE"
    owner_probe = "m.agent_id"
    audit_refs_column = "refs"
    row_converter = make_converter(instant=_timestamp, entry_ids=_text_array)

    def sql(self, text: str) -> str:
        return _placeholders(text)

    def encode(self, value: object) -> object:
        if isinstance(value, tuple):
            return list(value)
        if isinstance(value, dict):
            return Jsonb(value)
        return value

    def decode_time(self, value: Any) -> datetime:
        return _timestamp(value)

    def stamp(self, now: datetime) -> datetime:
        return require_utc(now, "now")

    def id_list(self, column: str) -> str:
        return f"{column} = ANY(?::text[])"

    def changes(self, conn: Any, cursor: Any) -> int:
        return int(cursor.rowcount)

    def temporal_valid(self, prefix: str = "") -> str:
        return temporal_valid(prefix)

    def scope_valid(self, prefix: str = "") -> str:
        return scope_valid(prefix)

    def mirror_insert(self, session: Session, content: str, agent_id: str) -> None:
        """Nothing to mirror: search reads `content` through its trigram index."""

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
        return fts.bm25(
            session,
            agent_id,
            long_terms,
            short_terms,
            scope_filter=scope_filter,
            limit=limit,
            all_terms=all_terms,
        )

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
        return fts.short(
            session,
            agent_id,
            short_terms,
            scope_filter=scope_filter,
            limit=limit,
            all_terms=all_terms,
        )

    def begin_clear(self, session: Session, agent_id: str, now: datetime) -> bool:
        return bool(
            session.changed(
                """INSERT INTO agent_memory_clear_job (agent_id, created_at) VALUES (?, ?)
                   ON CONFLICT (agent_id) DO NOTHING""",
                (agent_id, now),
            )
        )

    def suspend_guard(self, session: Session) -> None:
        session.execute("SELECT set_config(?, 'on', true)", (GUARD_SETTING,))

    def resume_guard(self, session: Session) -> None:
        session.execute("SELECT set_config(?, 'off', true)", (GUARD_SETTING,))

    def invalid_zone_candidates(self, session: Session) -> list[str]:
        return [zone for (zone,) in session.execute(_DISTINCT_ZONES)]

    def repair_predicates(self, session: Session) -> list[str]:
        row = session.one(
            """SELECT count(*) FROM pg_constraint
               WHERE conrelid = 'agent_memory'::regclass AND conname = ANY(?) AND convalidated""",
            ([TEMPORAL_CONSTRAINT, SCOPE_CONSTRAINT],),
        )
        if row is not None and row[0] >= 2:
            return []  # validated CHECKs: no row can violate them
        return [f"NOT {temporal_valid()}", f"NOT {scope_valid()}"]

    def after_repair(self, session: Session, *, touched: bool) -> bool:
        return False  # no mirror to rebuild


POSTGRES = PostgresDialect()
