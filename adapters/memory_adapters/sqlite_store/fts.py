"""SQLite's lexical recall over the FTS5 mirror (R-READ-3), and the mirror's maintenance.

`sql_claims.lexical` decides which terms go where. Terms of ≥3 code points go through FTS5
(the trigram tokenizer matches substrings in any script, but only from 3 code points),
ranked by bm25; shorter terms use an escaped LIKE over a bounded, importance-ordered slice
of the owner's rows. The owner predicate is applied twice before LIMIT: as the hashed owner
token inside the MATCH (so the index itself narrows to this owner) and as `m.agent_id = ?`
in the join (so a token collision can never leak a row).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import apsw

from memory_adapters.sql_claims.lexical import LexicalQuery, like_pattern, top_rows_per_scope
from memory_adapters.sql_claims.queries import NOT_FENCED, recallable, scope_clause
from memory_adapters.sql_claims.session import Session
from memory_adapters.sqlite_store.connection import fts_owner_token
from memory_core.ports.claims import FtsHit

__all__ = [
    "configure",
    "delete_keys",
    "fts_owner_token",
    "match_expression",
    "merge_step",
    "mirror_insert",
    "mirror_rowids",
    "ranked",
    "rebuild",
    "short",
]


def configure(conn: apsw.Connection, *, hardened: bool) -> None:
    """FTS5 secure-delete, stored in the table's config and set on every open: the mirror's
    'delete' commands (schema.fts_statements) then remove a row's terms from their leaf
    pages at once, with no merge, and `secure_delete` zeroes the bytes they leave (R-PRIV-3).
    Off only for the forensic test's negative control: a delete then writes a delete key and
    the terms stay in their segment."""
    conn.execute(
        "INSERT INTO agent_memory_fts (agent_memory_fts, rank) VALUES ('secure-delete', ?)",
        (1 if hardened else 0,),
    )


@contextlib.contextmanager
def delete_keys(conn: apsw.Connection, *, hardened: bool) -> Iterator[None]:
    """Inside a write transaction: deletes write FTS5 delete keys instead of secure deletes.

    A delete key costs a fraction of a secure delete (which rewrites the row's terms out of
    their leaf pages, ~1–5 ms a row), but leaves the terms in their segment until a merge
    takes both out: a clear uses it for its many rows and then merges (`merge_step`)."""
    conn.execute(
        "INSERT INTO agent_memory_fts (agent_memory_fts, rank) VALUES ('secure-delete', 0)"
    )
    try:
        yield
    finally:
        configure(conn, hardened=hardened)


def merge_step(conn: apsw.Connection, pages: int) -> bool:
    """One bounded step of a whole-index merge (FTS5 'merge' with a negative page count:
    every segment to one, `pages` pages written at most); False once there was no work left,
    i.e. the index is one segment with no delete keys in it."""
    before = conn.total_changes()
    conn.execute(
        "INSERT INTO agent_memory_fts (agent_memory_fts, rank) VALUES ('merge', ?)", (-pages,)
    )
    # FTS5 counts its own writes as changes: fewer than two means it found nothing to merge.
    return conn.total_changes() - before >= 2


def rebuild(conn: apsw.Connection) -> int:
    """Drop and re-derive the mirror from the claims (R-STORE-2); returns rows indexed."""
    conn.execute("INSERT INTO agent_memory_fts (agent_memory_fts) VALUES ('delete-all')")
    conn.execute(
        f"""INSERT INTO agent_memory_fts (rowid, content, owner)
            SELECT rid, content, agent_memory_fts_owner(agent_id) FROM agent_memory
            WHERE {recallable()}"""
    )
    return conn.changes()


def mirror_insert(conn: apsw.Connection, rid: int, content: str, agent_id: str) -> None:
    """Index one newly inserted recallable claim (see `schema.fts_statements` for why the
    insert path is not a trigger)."""
    conn.execute(
        "INSERT INTO agent_memory_fts (rowid, content, owner) VALUES (?, ?, ?)",
        (rid, content, fts_owner_token(agent_id)),
    )


def mirror_rowids(conn: apsw.Connection) -> set[int]:
    return {rowid for (rowid,) in conn.execute("SELECT rowid FROM agent_memory_fts")}


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(agent_id: str, terms: Sequence[str], *, all_terms: bool) -> str:
    """`owner : "<token>" AND content : ("t1" OR "t2")` — every term a quoted phrase, so
    user text can never inject FTS5 query syntax."""
    body = (" AND " if all_terms else " OR ").join(_quote(term) for term in terms)
    return f"owner : {_quote(fts_owner_token(agent_id))} AND content : ({body})"


def ranked(session: Session, query: LexicalQuery) -> list[FtsHit]:
    """bm25-ranked MATCH of the long terms; in ALL mode short terms narrow the candidates
    in the same statement, before LIMIT."""
    scope_sql, scope_params = scope_clause(query.scope_filter)
    like_sql = "".join(" AND m.content LIKE ? ESCAPE '\\'" for _ in query.short_terms)
    sql = f"""
      SELECT m.id, bm25(agent_memory_fts, 1.0, 0.0) AS score
      FROM agent_memory_fts f JOIN agent_memory m ON m.rid = f.rowid
      WHERE agent_memory_fts MATCH ?
        AND m.agent_id = ? AND {recallable("m.")} AND {NOT_FENCED} AND {scope_sql}{like_sql}
      ORDER BY score, m.importance DESC, m.created_at DESC, m.id
      LIMIT ?"""
    params = [
        match_expression(query.agent_id, query.long_terms, all_terms=query.all_terms),
        query.agent_id,
        *scope_params,
        *(like_pattern(term) for term in query.short_terms),
        query.limit,
    ]
    return [FtsHit(claim_id=cid, rank=float(score)) for cid, score in session.execute(sql, params)]


def short(session: Session, query: LexicalQuery) -> list[FtsHit]:
    """LIKE over the rowids of each admitted scope's most important rows (a compound
    SELECT member takes no LIMIT of its own, hence the subqueries), ranked by terms hit."""
    selects, params = top_rows_per_scope(query, "m.rid")
    slices = " UNION ALL ".join(f"SELECT * FROM ({select})" for select in selects)
    matched = " + ".join("(m.content LIKE ? ESCAPE '\\')" for _ in query.short_terms)
    sql = f"""
      SELECT m.id, {matched} AS hits
      FROM agent_memory m WHERE m.rid IN ({slices}) AND m.agent_id = ? AND {matched} >= ?
      ORDER BY hits DESC, m.importance DESC, m.created_at DESC, m.id
      LIMIT ?"""
    patterns = [like_pattern(term) for term in query.short_terms]
    bound = [*patterns, *params, query.agent_id, *patterns, query.needed, query.limit]
    # LIKE hits carry no bm25 score; 0.0 ranks them after every lexical hit (bm25 < 0).
    return [FtsHit(claim_id=cid, rank=0.0) for cid, _hits in session.execute(sql, bound)]
