"""SQLite's lexical recall over the FTS5 mirror (R-READ-3), and the mirror's maintenance.

`sql_claims.lexical` decides which terms go where. Terms of ≥3 code points go through FTS5
(the trigram tokenizer matches substrings in any script, but only from 3 code points),
ranked by bm25; shorter terms use an escaped LIKE over a bounded, importance-ordered slice
of the owner's rows. The owner predicate is applied twice before LIMIT: as the hashed owner
token inside the MATCH (so the index itself narrows to this owner) and as `m.agent_id = ?`
in the join (so a token collision can never leak a row).

A *broad* term — one whose rarest trigram is in at least `BROAD_MIN_DOCS` rows and a
`BROAD_FRACTION` of the index ("day" is in every weekday, "old" in "goldfish") — makes FTS5
decode and bm25-rank most of the owner's rows for a score that barely orders them (its idf is
near zero) — and bm25 itself scans each phrase's whole doclist to count its documents. In
ANY mode such terms are therefore not ranked: the other terms are ranked as before, and the
broad ones fill what is left from the owner's newest matching rows, a read FTS5 stops after
a bounded window (`ORDER BY rowid DESC LIMIT`), ranked 0.0 like the LIKE fallback's hits;
the read path's whole-word coverage orders them ("old" over "goldfish"). A store below
`BROAD_MIN_DOCS` rows never sees the difference. Document counts come from the index's own
vocabulary (`fts5vocab`) and are kept for `_DF_TTL_SECONDS` per trigram: counting costs as
much as a query, and a count a little stale only moves a term between the two ways of
reading it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence

import apsw
import attrs

from memory_adapters.sql_claims.lexical import LexicalQuery, like_pattern, top_rows_per_scope
from memory_adapters.sql_claims.queries import NOT_FENCED, recallable, scope_clause
from memory_adapters.sql_claims.session import Session
from memory_adapters.sqlite_store.connection import fts_owner_token
from memory_core.ports.claims import FtsHit

__all__ = [
    "BROAD_FRACTION",
    "BROAD_MIN_DOCS",
    "broad_terms",
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


BROAD_MIN_DOCS = 5_000
BROAD_FRACTION = 0.2
# Rows of the newest-first window per hit still wanted: scope and fence predicates apply
# after the window, so it reads more than it needs; it widens until it is exhausted.
_WINDOW_FACTOR = 8
_WINDOW_MIN = 64
_WINDOW_MAX = 8_192
_DF_TTL_SECONDS = 60.0
_DF_MAX_ENTRIES = 4_096
# (database file, trigram) -> (documents holding it, monotonic time it was counted)
_doc_counts: dict[tuple[str, str], tuple[int, float]] = {}


def _trigram_docs(conn: apsw.Connection, trigram: str) -> int:
    key = (conn.filename, trigram)
    now = time.monotonic()
    cached = _doc_counts.get(key)
    if cached is not None and now - cached[1] < _DF_TTL_SECONDS:
        return cached[0]
    row = conn.execute(
        "SELECT doc FROM agent_memory_fts_vocab WHERE term = ?", (trigram,)
    ).fetchone()
    docs = int(row[0]) if row else 0
    if len(_doc_counts) >= _DF_MAX_ENTRIES:
        _doc_counts.clear()  # bounded by starting over; single dict operations are atomic
    _doc_counts[key] = (docs, now)
    return docs


def broad_terms(session: Session, terms: Sequence[str]) -> frozenset[str]:
    """The terms whose every trigram is in at least BROAD_MIN_DOCS rows and BROAD_FRACTION
    of the index (the rarest trigram bounds how many rows a term can match)."""
    conn: apsw.Connection = session.conn  # type: ignore[assignment]
    (rows,) = conn.execute("SELECT coalesce(max(rid), 0) FROM agent_memory").fetchone()
    floor = max(BROAD_MIN_DOCS, BROAD_FRACTION * rows)
    if rows < floor:
        return frozenset()
    broad = set()
    for term in terms:
        folded = term.lower()
        trigrams = {folded[i : i + 3] for i in range(len(folded) - 2)}
        if trigrams and min(_trigram_docs(conn, trigram) for trigram in trigrams) >= floor:
            broad.add(term)
    return frozenset(broad)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(agent_id: str, terms: Sequence[str], *, all_terms: bool) -> str:
    """`owner : "<token>" AND content : ("t1" OR "t2")` — every term a quoted phrase, so
    user text can never inject FTS5 query syntax."""
    body = (" AND " if all_terms else " OR ").join(_quote(term) for term in terms)
    return f"owner : {_quote(fts_owner_token(agent_id))} AND content : ({body})"


def ranked(session: Session, query: LexicalQuery) -> list[FtsHit]:
    """bm25-ranked MATCH of the long terms; in ALL mode short terms narrow the candidates
    in the same statement, before LIMIT. In ANY mode broad terms are read newest first
    after the others (see the module's docstring)."""
    broad = frozenset() if query.all_terms else broad_terms(session, query.long_terms)
    if not broad:
        return _ranked(session, query)
    narrow = tuple(term for term in query.long_terms if term not in broad)
    hits = _ranked(session, attrs.evolve(query, long_terms=narrow)) if narrow else []
    if len(hits) < query.limit:
        seen = {hit.claim_id for hit in hits}
        wide = attrs.evolve(query, long_terms=tuple(sorted(broad, key=query.long_terms.index)))
        extra = _newest(session, wide, wanted=query.limit)
        hits += [hit for hit in extra if hit.claim_id not in seen][: query.limit - len(hits)]
    return hits


def _newest(session: Session, query: LexicalQuery, *, wanted: int) -> list[FtsHit]:
    """The owner's `wanted` newest matching rows, ranked 0.0 (after every bm25 hit, as
    the LIKE fallback's): a window of FTS5 rowids read newest first, widened until enough
    rows pass the predicates or the matches run out. No bm25: FTS5 computes its idf by
    scanning every phrase's whole doclist, which for a broad term is the cost avoided."""
    scope_sql, scope_params = scope_clause(query.scope_filter)
    match = match_expression(query.agent_id, query.long_terms, all_terms=False)
    sql = f"""
      SELECT m.id FROM (
        SELECT rowid FROM agent_memory_fts
        WHERE agent_memory_fts MATCH ? ORDER BY rowid DESC LIMIT ?) w
      JOIN agent_memory m ON m.rid = w.rowid
      WHERE m.agent_id = ? AND {recallable("m.")} AND {NOT_FENCED} AND {scope_sql}
      ORDER BY m.rid DESC
      LIMIT ?"""
    window = max(wanted * _WINDOW_FACTOR, _WINDOW_MIN)
    while True:
        rows = session.execute(
            sql, [match, window, query.agent_id, *scope_params, wanted]
        ).fetchall()
        if len(rows) >= wanted or window >= _WINDOW_MAX:
            break
        (matched,) = session.execute(
            "SELECT count(*) FROM (SELECT rowid FROM agent_memory_fts"
            " WHERE agent_memory_fts MATCH ? LIMIT ?)",
            (match, window),
        ).fetchone()
        if matched < window:  # the window held every match: nothing more to read
            break
        window = min(window * 4, _WINDOW_MAX)
    return [FtsHit(claim_id=cid, rank=0.0) for (cid,) in rows]


def _ranked(session: Session, query: LexicalQuery) -> list[FtsHit]:
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
