"""Versioned migrations per component ("claims", "vectors"), each in one transaction and
recorded in `agent_memory_schema` (R-STORE-1). A schema newer than this code is refused.

The claim store and the vector store migrate independently, so a deployment may put only
one of them on PostgreSQL. Both serialise DDL on one advisory lock: two processes opening
the same schema at once never both apply a migration or race on CREATE EXTENSION.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

import attrs
import psycopg
from psycopg import sql

from memory_adapters.postgres_store.connection import search_path_sql
from memory_adapters.postgres_store.errors import translate_errors
from memory_core.domain.errors import StoreError

__all__ = ["Extensions", "Migration", "migrate", "schema_version"]

_log = logging.getLogger(__name__)

_DDL_LOCK = "agent-memory.ddl"
_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS agent_memory_schema (
  component text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  description text NOT NULL,
  applied_at timestamptz NOT NULL,
  PRIMARY KEY (component, version)
)"""


@attrs.frozen(kw_only=True)
class Extensions:
    """Where the extensions a component uses live; a missing optional one is None."""

    schemas: tuple[str, ...]
    available: frozenset[str]

    def has(self, name: str) -> bool:
        return name in self.available


@attrs.frozen(kw_only=True)
class Migration:
    component: str
    version: int
    description: str
    apply: Callable[[psycopg.Connection, Extensions], None]


def _extension_schema(conn: psycopg.Connection, name: str) -> str | None:
    row = conn.execute(
        """SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
           WHERE e.extname = %s""",
        (name,),
    ).fetchone()
    return None if row is None else str(row[0])


def _ensure_extension(
    conn: psycopg.Connection, name: str, home: str, *, required: bool
) -> str | None:
    """The schema of extension `name`, creating it in `home` when it is installable. An
    optional one that cannot be created (not shipped, no privilege) is reported as None."""
    found = _extension_schema(conn, name)
    if found is not None:
        return found
    try:
        with conn.transaction():  # a savepoint: a refusal must not abort the caller's work
            conn.execute(
                sql.SQL("CREATE EXTENSION IF NOT EXISTS {} WITH SCHEMA {}").format(
                    sql.Identifier(name), sql.Identifier(home)
                )
            )
    except psycopg.Error as exc:
        if required:
            raise StoreError(
                f"postgres extension {name!r} is required and could not be created"
                f" ({type(exc).__name__}); install it or have an administrator run"
                f" CREATE EXTENSION {name}"
            ) from exc
        _log.warning("optional postgres extension %s unavailable: %s", name, type(exc).__name__)
        return None
    return _extension_schema(conn, name)


def schema_version(conn: psycopg.Connection, component: str) -> int:
    row = conn.execute(
        "SELECT max(version) FROM agent_memory_schema WHERE component = %s", (component,)
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _lock(conn: psycopg.Connection) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_DDL_LOCK,))


def migrate(
    conn: psycopg.Connection,
    *,
    schema: str,
    component: str,
    migrations: Sequence[Migration],
    required_extensions: Sequence[str] = (),
    optional_extensions: Sequence[str] = (),
    extension_schema: str = "public",
    now: datetime | None = None,
) -> Extensions:
    """Bring `component` in `schema` to its latest version; leaves the session's search path
    set to the schema and the extensions' schemas."""
    latest = migrations[-1].version
    with translate_errors(f"migrate {component}"):
        with conn.transaction():
            _lock(conn)
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            exists = conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (extension_schema,)
            ).fetchone()
            home = extension_schema if exists else schema
            found: dict[str, str] = {}
            for name in required_extensions:
                place = _ensure_extension(conn, name, home, required=True)
                assert place is not None
                found[name] = place
            for name in optional_extensions:
                if (place := _ensure_extension(conn, name, home, required=False)) is not None:
                    found[name] = place
            extensions = Extensions(
                schemas=tuple(dict.fromkeys(found.values())), available=frozenset(found)
            )
            conn.execute(search_path_sql(schema, extensions.schemas))
            conn.execute(_VERSION_TABLE)
            start = schema_version(conn, component)
        if start > latest:
            raise StoreError(
                f"{component} schema version {start} is newer than this code ({latest});"
                " downgrade refused"
            )
        for migration in migrations:
            if migration.version <= start:
                continue
            with conn.transaction():
                _lock(conn)
                # Re-read under the lock: another process may have applied it meanwhile.
                if schema_version(conn, component) >= migration.version:
                    continue
                migration.apply(conn, extensions)
                conn.execute(
                    """INSERT INTO agent_memory_schema (component, version, description, applied_at)
                       VALUES (%s, %s, %s, COALESCE(%s::timestamptz, now()))""",
                    (component, migration.version, migration.description, now),
                )
            _log.info("postgres %s schema migrated to version %d", component, migration.version)
    return extensions
