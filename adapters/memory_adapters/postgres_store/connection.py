"""Connections: one per store object, in autocommit mode with explicit transactions.

Every session runs in UTC (timestamps come back aware and in UTC), with a bounded lock wait
and, for the synchronous claim store, a statement timeout — the PostgreSQL counterpart of
SQLite's busy timeout: no call waits without bound. The search path is pinned to the
store's schema plus the schemas holding the extensions it uses, so one database can host
several independent deployments side by side.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs
import psycopg
from psycopg import sql

from memory_adapters.postgres_store.errors import translate_errors
from memory_core.domain.errors import ValidationError

__all__ = [
    "ConnectionSettings",
    "aconnect",
    "agent_lock_key",
    "connect",
    "search_path_sql",
    "validate_schema",
]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_APPLICATION = "agent-memory"


def validate_schema(name: str) -> str:
    """A plain lower-case identifier: it is interpolated (quoted) into DDL and lock keys."""
    if not isinstance(name, str) or not _SCHEMA_NAME.fullmatch(name):
        raise ValidationError("schema", "must match [a-z_][a-z0-9_]{0,62}")
    return name


@attrs.frozen(kw_only=True)
class ConnectionSettings:
    """How a store reaches its database.

    `dsn` is a libpq connection string or URI. `statement_timeout_ms` bounds every statement
    of the synchronous claim store (the vector store derives a per-call timeout from each
    call's deadline instead); `lock_timeout_ms` bounds waiting for a row or advisory lock.
    """

    dsn: str
    schema: str = attrs.field(
        default="agent_memory", validator=lambda _i, _a, v: validate_schema(v)
    )
    statement_timeout_ms: int = attrs.field(default=30_000, validator=attrs.validators.ge(0))
    lock_timeout_ms: int = attrs.field(default=10_000, validator=attrs.validators.ge(0))
    connect_timeout_s: int = attrs.field(default=10, validator=attrs.validators.ge(1))


def _options(settings: ConnectionSettings, *, statement_timeout: bool) -> str:
    parts = ["-c TimeZone=UTC", f"-c lock_timeout={settings.lock_timeout_ms}"]
    if statement_timeout:
        parts.append(f"-c statement_timeout={settings.statement_timeout_ms}")
    return " ".join(parts)


def connect(settings: ConnectionSettings) -> psycopg.Connection:
    """A synchronous session for the claim store."""
    with translate_errors("connect"):
        return psycopg.connect(
            settings.dsn,
            autocommit=True,
            application_name=_APPLICATION,
            connect_timeout=settings.connect_timeout_s,
            options=_options(settings, statement_timeout=True),
        )


async def aconnect(settings: ConnectionSettings) -> psycopg.AsyncConnection:
    """An asyncio session for the vector store; statement timeouts are set per call."""
    with translate_errors("connect"):
        return await psycopg.AsyncConnection.connect(
            settings.dsn,
            autocommit=True,
            application_name=_APPLICATION,
            connect_timeout=settings.connect_timeout_s,
            options=_options(settings, statement_timeout=False),
        )


def search_path_sql(schema: str, extension_schemas: Sequence[str]) -> sql.Composed:
    """`SET search_path TO "schema", <extension schemas>` (pg_catalog is always searched)."""
    names = list(dict.fromkeys([schema, *extension_schemas]))
    return sql.SQL("SET search_path TO {}").format(
        sql.SQL(", ").join(sql.Identifier(name) for name in names)
    )


def agent_lock_key(schema: str, agent_id: str) -> str:
    """The text hashed into an agent's advisory lock: writers of one agent in one schema
    serialise (like SQLite's single writer, but per agent); other agents never wait."""
    return f"agent-memory/{schema}/{agent_id}"
