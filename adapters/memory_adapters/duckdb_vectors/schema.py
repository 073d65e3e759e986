"""The v2 schema, the open self-check, and how DuckDB connections are made and their errors read.

v2 is one `memory_vector` table of fixed-size `FLOAT[<dim>]` arrays plus exactly one
`embedding_meta` row recording the identity and `format_version = 2` (R-VEC-1). No index but
the primary key: the scan is exact and happens in numpy, not here.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import StoreError

__all__ = [
    "FILE_MEMORY_LIMIT",
    "FORMAT_VERSION",
    "UnusableStore",
    "connect",
    "create_schema",
    "is_fatal",
    "read_identity",
    "sql_literal",
]

FORMAT_VERSION = 2

# Extensions are never fetched or attached implicitly: the vector path works offline and
# exact (R-ARCH-6), so a function that would need one fails instead of touching the network.
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

# DuckDB messages that mean the database instance can no longer be trusted (reference §6).
_FATAL_MARKERS = ("internal error", "fatal error", "database has been invalidated")


class UnusableStore(StoreError):
    """The file opens but is not a valid v2 store (schema, meta row, version, array type)."""


# A store file's buffer pool only stages writes and the one full read at warm-up; the
# scan runs over the resident matrix. Left at DuckDB's default (80% of RAM per file) it
# caches every block it has read, doubling each agent's footprint (measured at 200k × 384:
# RSS after warm-up 990 MB with the default, 623 MB with this cap; 1M rows still write).
FILE_MEMORY_LIMIT = "256MB"


def connect(path: Path | None) -> duckdb.DuckDBPyConnection:
    """A connection to the file at `path`, or to a private in-memory database for None
    (whose data lives in its buffer pool, so it keeps DuckDB's default limit)."""
    if path is None:
        return duckdb.connect(":memory:", config=dict(_CONFIG))
    return duckdb.connect(str(path), config={**_CONFIG, "memory_limit": FILE_MEMORY_LIMIT})


def sql_literal(text: str) -> str:
    """A single-quoted SQL string literal (ATTACH takes no parameters)."""
    return "'" + text.replace("'", "''") + "'"


def create_schema(
    conn: duckdb.DuckDBPyConnection, identity: EmbeddingIdentity, *, catalog: str | None = None
) -> None:
    """Create both tables and the one meta row, in the current transaction."""
    prefix = f"{catalog}." if catalog else ""
    dim = _dim(identity)
    conn.execute(
        f"CREATE TABLE {prefix}memory_vector "
        f"(memory_id VARCHAR PRIMARY KEY, embedding FLOAT[{dim}])"
    )
    conn.execute(
        f"CREATE TABLE {prefix}embedding_meta (provider VARCHAR NOT NULL, "
        "model VARCHAR NOT NULL, dim INTEGER NOT NULL, format_version INTEGER NOT NULL)"
    )
    conn.execute(
        f"INSERT INTO {prefix}embedding_meta VALUES (?, ?, ?, ?)",
        [identity.provider, identity.model, dim, FORMAT_VERSION],
    )


def read_identity(
    conn: duckdb.DuckDBPyConnection, *, catalog: str | None = None
) -> EmbeddingIdentity:
    """The open self-check: both tables present, exactly one meta row, format 2, and the
    embedding column typed `FLOAT[dim]` for the recorded dim. Raises UnusableStore."""
    prefix = f"{catalog}." if catalog else ""
    try:
        rows = conn.execute(
            f"SELECT provider, model, dim, format_version FROM {prefix}embedding_meta"
        ).fetchall()
        # One catalog lookup for both columns: the self-check runs on every open.
        columns = dict(
            conn.execute(
                "SELECT name, type FROM pragma_table_info(?)", [f"{prefix}memory_vector"]
            ).fetchall()
        )
    except duckdb.CatalogException as exc:
        raise UnusableStore("vector store schema is missing") from exc
    if len(rows) != 1:
        raise UnusableStore(f"vector store has {len(rows)} meta rows, expected exactly one")
    provider, model, dim, version = rows[0]
    if version != FORMAT_VERSION:
        raise UnusableStore(f"vector store format_version {version}, expected {FORMAT_VERSION}")
    if not isinstance(dim, int) or dim <= 0:
        raise UnusableStore("vector store meta has no positive dim")
    if columns.get("embedding") != f"FLOAT[{dim}]" or columns.get("memory_id") != "VARCHAR":
        raise UnusableStore("vector store table does not match its meta dim")
    return EmbeddingIdentity(provider=provider, model=model, dim=dim)


def is_fatal(exc: BaseException) -> bool:
    """Whether a DuckDB failure means the instance is damaged (quarantine, not retry)."""
    if isinstance(exc, duckdb.FatalException | duckdb.InternalException):
        return True
    message = str(exc).lower()
    return any(marker in message for marker in _FATAL_MARKERS)


def _dim(identity: EmbeddingIdentity) -> int:
    # The dim is interpolated into DDL: accept only a real positive int.
    dim = identity.dim
    if type(dim) is not int or dim <= 0:
        raise StoreError("embedding dim must be a positive integer")
    return dim
