"""The FTS5 mirror's maintenance: one contentless table per owner, its triggers' functions,
its rebuild, and its teardown by a clear (R-READ-3, R-FORGET-3).

The mirror is one contentless FTS5 table per owner (`owner_table`: `agent_memory_fts_` and
16 hex digits of a hash of the agent id, never the id itself), created by the first write
that indexes one of the agent's claims and dropped by its clear or retirement. An agent's
search, its bm25 statistics and its deletes then touch only its own posting lists: with one
shared table (issue 15, bare FTS5, 10k rows of the agent) a two-term search went from
129 to 565 ms p50 as other agents' rows grew from 10k to 200k — an owner-token AND or a
rowid range per owner did not help, since bm25 scans each phrase's whole doclist — while
the agent's own table stayed at 55–77 ms. Every hit is still joined back to
`m.agent_id = ?` before LIMIT, so a hash collision costs speed, never a leak.

The index is never read while the agent's clear runs: its reads are fenced (R-FORGET-3),
and the clear takes the table apart page by page (`drop_step`) before dropping it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

import apsw

from memory_adapters.sql_claims.queries import recallable

__all__ = [
    "FORGET_FUNCTION",
    "INDEX_FUNCTION",
    "configure",
    "drop_all",
    "drop_owner",
    "drop_step",
    "mirror_counts",
    "mirror_inserted",
    "mirror_rowids",
    "owner_table",
    "owner_tables",
    "rebuild",
    "register_functions",
]

FORGET_FUNCTION = "agent_memory_fts_forget"
INDEX_FUNCTION = "agent_memory_fts_index"
_PREFIX = "agent_memory_fts_"
_KEY_DIGITS = 16
_DOMAIN = b"agent-memory.fts-table.v1\0"
_TOKENIZER_KEY = "fts_tokenizer"
_UNHARDENED_KEY = "fts_unhardened"  # set by the negative control's open, see `configure`
_CLEARING = "SELECT agent_id FROM agent_memory_clear_job"
# Rows of an owner table's `_data` (one FTS5 page each, ~4 KB) a clear's step deletes.
_DROP_ROWS = 64


def owner_table(agent_id: str) -> str:
    """The agent's FTS5 table: a hash of the id (64 bits), never the id itself."""
    digest = hashlib.sha256(_DOMAIN + agent_id.encode()).hexdigest()
    return _PREFIX + digest[:_KEY_DIGITS]


def owner_tables(conn: apsw.Connection) -> list[str]:
    """Every owner table in the file (their shadow tables and vocabularies are longer)."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB ?"
        " AND length(name) = ? AND sql LIKE '%fts5(%'",
        (_PREFIX + "*", len(_PREFIX) + _KEY_DIGITS),
    )
    return sorted(name for (name,) in rows)


def _missing_table(exc: apsw.SQLError) -> bool:
    return "no such table" in str(exc)


def _create(conn: apsw.Connection, table: str) -> None:
    meta = dict(conn.execute("SELECT key, value FROM agent_memory_meta").fetchall())
    tokenizer = meta[_TOKENIZER_KEY]
    conn.execute(
        f"CREATE VIRTUAL TABLE {table} USING fts5(content, content='', tokenize='{tokenizer}')"
    )
    conn.execute(f"CREATE VIRTUAL TABLE {table}_vocab USING fts5vocab({table}, 'row')")
    _secure_delete(conn, table, hardened=_UNHARDENED_KEY not in meta)


def _secure_delete(conn: apsw.Connection, table: str, *, hardened: bool) -> None:
    """FTS5 secure-delete, stored in the table's config: the mirror's 'delete' commands
    (`register_functions`) then remove a row's terms from their leaf pages at once, with no
    merge, and `secure_delete` zeroes the bytes they leave (R-PRIV-3). Off only for the
    forensic test's negative control: a delete then writes a delete key and the terms stay
    in their segment."""
    conn.execute(
        f"INSERT INTO {table} ({table}, rank) VALUES ('secure-delete', ?)", (1 if hardened else 0,)
    )


def configure(conn: apsw.Connection, *, hardened: bool) -> None:
    """Inside a write transaction, on open: every owner table's secure-delete as this open
    asks. A file an unhardened open (the negative control) touched says so in the meta
    table, so a hardened open looks at the tables only then."""
    flag = conn.execute(
        "SELECT 1 FROM agent_memory_meta WHERE key = ?", (_UNHARDENED_KEY,)
    ).fetchone()
    if hardened and flag is None:
        return
    for table in owner_tables(conn):
        _secure_delete(conn, table, hardened=hardened)
    if hardened:
        conn.execute("DELETE FROM agent_memory_meta WHERE key = ?", (_UNHARDENED_KEY,))
    else:
        conn.execute(
            "INSERT OR IGNORE INTO agent_memory_meta (key, value) VALUES (?, '1')",
            (_UNHARDENED_KEY,),
        )


def register_functions(conn: apsw.Connection) -> None:
    """The two functions the mirror's triggers (`schema.fts_statements`) call: a trigger
    cannot name a table chosen per row, so they route the row to its owner's table.

    A row to forget whose owner has no table was never indexed: nothing to do. A row to
    index whose owner has no table cannot be: a trigger may not create one (a schema change
    under a running statement), so the file is marked for startup repair in the same
    transaction (`sql_claims.repair`), which re-derives the mirror. Every connection that
    changes claims registers them; one that does not cannot change claims at all."""

    def forget(agent_id: str, rid: int, content: str) -> None:
        table = owner_table(agent_id)
        try:
            conn.execute(
                f"INSERT INTO {table} ({table}, rowid, content) VALUES ('delete', ?, ?)",
                (rid, content),
            )
        except apsw.SQLError as exc:
            if not _missing_table(exc):
                raise

    def index(agent_id: str, rid: int, content: str) -> None:
        table = owner_table(agent_id)
        try:
            conn.execute(f"INSERT INTO {table} (rowid, content) VALUES (?, ?)", (rid, content))
        except apsw.SQLError as exc:
            if not _missing_table(exc):
                raise
            conn.execute(
                "INSERT INTO agent_memory_repair_mark (reason) VALUES ('mirror')"
                " ON CONFLICT DO NOTHING"
            )

    for name, function in ((FORGET_FUNCTION, forget), (INDEX_FUNCTION, index)):
        # Innocuous: callable from triggers even with trusted_schema=OFF.
        conn.create_scalar_function(name, function, 3, flags=apsw.SQLITE_INNOCUOUS)


def mirror_inserted(conn: apsw.Connection, agent_id: str, claim_ids: Sequence[str]) -> None:
    """Index the agent's newly inserted recallable claims, creating its owner's table on
    first use (see `schema.fts_statements` for why the insert path is not a trigger).

    One statement after the batch's rows, not one beside each row: a row's INSERT (its
    triggers and indexes) alternating with an FTS5 insert cost an ingestion chunk about a
    fifth more CPU than the two run apart (issue 15). In rowid order, the order FTS5
    appends doclists in."""
    if not claim_ids:
        return
    table = owner_table(agent_id)
    statement = (
        f"INSERT INTO {table} (rowid, content) SELECT rid, content FROM agent_memory"
        " WHERE agent_id = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY rid"
    )
    bound = (agent_id, json.dumps(list(claim_ids)))
    try:
        conn.execute(statement, bound)
    except apsw.SQLError as exc:
        if not _missing_table(exc):
            raise
        _create(conn, table)
        conn.execute(statement, bound)


def drop_all(conn: apsw.Connection) -> None:
    for table in owner_tables(conn):
        _drop(conn, table)


def _drop(conn: apsw.Connection, table: str) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {table}_vocab")
    conn.execute(f"DROP TABLE IF EXISTS {table}")


def drop_step(conn: apsw.Connection, agent_id: str, more: Callable[[], bool]) -> bool:
    """Take the agent's table apart inside a clear: `_DROP_ROWS` of its pages at a time
    (their cells zeroed by `secure_delete`) until `more` says the batch's time is spent —
    at least one step per call, so every batch moves on; True once the table is gone. A
    DROP of a large index in one statement would free (and zero) every page at once:
    seconds for an agent holding most of a 100k store."""
    table = owner_table(agent_id)
    step = f"DELETE FROM {table}_data WHERE rowid IN (SELECT rowid FROM {table}_data LIMIT ?)"
    try:
        conn.execute(step, (_DROP_ROWS,))
    except apsw.SQLError as exc:
        if not _missing_table(exc):
            raise
        return True  # no table: nothing indexed, or an earlier batch dropped it
    while conn.changes() == _DROP_ROWS:  # a short step took the last pages
        if not more():
            return False
        conn.execute(step, (_DROP_ROWS,))
    _drop(conn, table)
    return True


def drop_owner(conn: apsw.Connection, agent_id: str) -> None:
    """The agent's table, dropped in one statement (retirement: one transaction anyway)."""
    _drop(conn, owner_table(agent_id))


def rebuild(conn: apsw.Connection) -> int:
    """Drop and re-derive the mirror from the claims (R-STORE-2); returns rows indexed. An
    agent whose clear runs gets no table: its clear would only take it apart again."""
    drop_all(conn)
    indexed = 0
    agents = conn.execute(
        f"SELECT DISTINCT agent_id FROM agent_memory WHERE {recallable()}"
        f" AND agent_id NOT IN ({_CLEARING})"
    ).fetchall()
    for (agent_id,) in agents:
        table = owner_table(agent_id)
        _create(conn, table)
        conn.execute(
            f"""INSERT INTO {table} (rowid, content)
                SELECT rid, content FROM agent_memory WHERE agent_id = ? AND {recallable()}""",
            (agent_id,),
        )
        indexed += conn.changes()
    return indexed


def mirror_rowids(conn: apsw.Connection) -> set[int]:
    return {
        rowid
        for table in owner_tables(conn)
        for (rowid,) in conn.execute(f"SELECT rowid FROM {table}")
    }


def mirror_counts(conn: apsw.Connection) -> dict[str, int]:
    """Rows indexed per owner table that holds any, leaving out the tables of agents whose
    clear runs (one may be half taken apart)."""
    clearing = {owner_table(agent) for (agent,) in conn.execute(_CLEARING)}
    counts = {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in owner_tables(conn)
        if table not in clearing
    }
    return {table: count for table, count in counts.items() if count}
