"""SQLite's lexical recall over the owner's FTS5 table (R-READ-3).

`sql_claims.lexical` decides which terms go where. Terms of ≥3 code points go through FTS5
(the trigram tokenizer matches substrings in any script, but only from 3 code points),
ranked by bm25; shorter terms use an escaped LIKE over a bounded, importance-ordered slice
of the owner's rows.

A *broad* term — one whose rarest trigram is in at least `BROAD_MIN_DOCS` rows and a
`BROAD_FRACTION` of the owner's index ("day" is in every weekday, "old" in "goldfish") —
makes FTS5 decode and bm25-rank most of the owner's rows for a score that barely orders them
(its idf is near zero) — and bm25 itself scans each phrase's whole doclist to count its
documents. In ANY mode such terms are therefore not ranked: the other terms are ranked as
before, and the broad ones fill what is left from the owner's newest matching rows, a read
FTS5 stops after a bounded window (`ORDER BY rowid DESC LIMIT`), ranked 0.0 like the LIKE
fallback's hits; the read path's whole-word coverage orders them ("old" over "goldfish").
Document counts come from the owner's vocabulary (`fts5vocab`) and are kept for
`_DF_TTL_SECONDS`: counting costs as much as a query, and a count a little stale only moves
a term between the two ways of reading it.

The index is never read while the agent's clear runs (R-FORGET-3).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import apsw
import attrs

from memory_adapters.sql_claims.lexical import LexicalQuery, like_pattern, top_rows_per_scope
from memory_adapters.sql_claims.queries import CLAIM_SELECT, NOT_FENCED, recallable, scope_clause
from memory_adapters.sql_claims.reads import revalidated
from memory_adapters.sql_claims.rows import CLAIM_COLUMNS
from memory_adapters.sql_claims.session import Session
from memory_adapters.sqlite_store.fts.mirror import owner_table
from memory_core.ports.claims import FtsHit

__all__ = ["BROAD_FRACTION", "BROAD_MIN_DOCS", "broad_terms", "match_expression", "ranked", "short"]

BROAD_MIN_DOCS = 5_000
BROAD_FRACTION = 0.2
# Rows of the newest-first window per hit still wanted: scope and fence predicates apply
# after the window, so it reads more than it needs; it widens until it is exhausted.
_WINDOW_FACTOR = 8
# Matches ranked by bm25 alone per hit wanted before their rows are joined (see `_ranked`).
_RANK_WINDOW_FACTOR = 4
_WINDOW_MIN = 64
_WINDOW_MAX = 8_192
_DF_TTL_SECONDS = 60.0
_DF_MAX_ENTRIES = 4_096
# (database file, owner table, trigram or "" for the owner's rows) -> (count, monotonic time)
_doc_counts: dict[tuple[str, str, str], tuple[int, float]] = {}


def _counted(conn: apsw.Connection, table: str, term: str, count: Callable[[], int]) -> int:
    key = (conn.filename, table, term)
    now = time.monotonic()
    cached = _doc_counts.get(key)
    if cached is not None and now - cached[1] < _DF_TTL_SECONDS:
        return cached[0]
    value = count()
    if len(_doc_counts) >= _DF_MAX_ENTRIES:
        _doc_counts.clear()  # bounded by starting over; single dict operations are atomic
    _doc_counts[key] = (value, now)
    return value


def _scalar(conn: apsw.Connection, sql: str, params: Sequence[object]) -> int:
    row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def broad_terms(session: Session, agent_id: str, terms: Sequence[str]) -> frozenset[str]:
    """The terms whose every trigram is in at least BROAD_MIN_DOCS rows and BROAD_FRACTION
    of the owner's index (the rarest trigram bounds how many rows a term can match)."""
    conn: apsw.Connection = session.conn  # type: ignore[assignment]
    table = owner_table(agent_id)
    rows = _counted(
        conn,
        table,
        "",
        lambda: _scalar(conn, "SELECT count(*) FROM agent_memory WHERE agent_id = ?", (agent_id,)),
    )
    floor = max(BROAD_MIN_DOCS, BROAD_FRACTION * rows)
    if rows < floor:
        return frozenset()

    def docs(trigram: str) -> int:
        sql = f"SELECT doc FROM {table}_vocab WHERE term = ?"
        return _counted(conn, table, trigram, lambda: _scalar(conn, sql, (trigram,)))

    broad = set()
    for term in terms:
        folded = term.lower()
        # Looked up no further than the term's first narrow trigram: a rare term (most of
        # a turn's) costs a lookup or two, not one per trigram.
        trigrams = dict.fromkeys(folded[i : i + 3] for i in range(len(folded) - 2))
        if trigrams and all(docs(trigram) >= floor for trigram in trigrams):
            broad.add(term)
    return frozenset(broad)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: Sequence[str], *, all_terms: bool) -> str:
    """`"t1" OR "t2"` — every term a quoted phrase, so user text can never inject FTS5
    query syntax."""
    return (" AND " if all_terms else " OR ").join(_quote(term) for term in terms)


def _fenced(session: Session, agent_id: str) -> bool:
    """Whether a clear is taking the agent's table apart (its index is not read then)."""
    row = session.one(
        "SELECT EXISTS (SELECT 1 FROM agent_memory_clear_job WHERE agent_id = ?)", (agent_id,)
    )
    return bool(row and row[0])


def ranked(session: Session, query: LexicalQuery) -> list[FtsHit]:
    """bm25-ranked MATCH of the long terms; in ALL mode short terms narrow the candidates
    in the same statement, before LIMIT. In ANY mode broad terms are read newest first
    after the others (see the module's docstring)."""
    if _fenced(session, query.agent_id):
        return []  # R-FORGET-3
    try:
        return _search(session, query)
    except apsw.SQLError as exc:
        # Nothing of the agent's indexed yet. Asked of the statement rather than looked up
        # first: sqlite_master has no index by name, so a lookup scanned every agent's
        # tables on every turn.
        if str(exc).endswith(f"no such table: {owner_table(query.agent_id)}"):
            return []
        raise


def _search(session: Session, query: LexicalQuery) -> list[FtsHit]:
    broad = (
        frozenset() if query.all_terms else broad_terms(session, query.agent_id, query.long_terms)
    )
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
    table = owner_table(query.agent_id)
    scope_sql, scope_params = scope_clause(query.scope_filter)
    match = match_expression(query.long_terms, all_terms=False)
    sql = f"""
      SELECT m.id FROM (
        SELECT rowid FROM {table}
        WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?) w
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
            f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)",
            (match, window),
        ).fetchone()
        if matched < window:  # the window held every match: nothing more to read
            break
        window = min(window * 4, _WINDOW_MAX)
    return [FtsHit(claim_id=cid, rank=0.0) for (cid,) in rows]


def _ranked(session: Session, query: LexicalQuery) -> list[FtsHit]:
    """bm25 order, equal scores by importance DESC, created_at DESC, id (FtsHit's order).

    The best `_RANK_WINDOW_FACTOR × limit` matches by bm25 are read from the owner's index
    alone, and only those are joined to their rows for the predicates and the tie-break:
    joining every match first cost a 100k-claim agent's rare-word turn 2.2 ms for 1.0 ms of
    bm25. The rows are read in score order: first the best `limit` matches and every one
    tied with the last of them, and the rest of the window only when the predicates left
    fewer than `limit` — a row not read then scores strictly worse than every hit kept. The
    window's answer is the full one whenever it provably is — the window held every match,
    or the last hit kept scores strictly better than anything the window cut — and otherwise
    (predicates removed too many, or ties at the window's edge) the full statement runs.

    The rows read are whole and under re-validation's predicates, so each hit carries its
    authoritative claim and the turn does not read it again (R-READ-3)."""
    table = owner_table(query.agent_id)
    match = match_expression(query.long_terms, all_terms=query.all_terms)
    window = query.limit * _RANK_WINDOW_FACTOR
    scored = session.execute(
        f"SELECT rowid, bm25({table}) AS score FROM {table} WHERE {table} MATCH ?"
        " ORDER BY score LIMIT ?",
        (match, window),
    ).fetchall()
    if not scored:
        return []
    scores = dict(scored)
    first = _through_ties(scored, query.limit)
    rows = _window_rows(session, query, [rid for rid, _ in scored[:first]])
    try:
        ranked = _order(rows, scores)[: query.limit]
        if first < len(scored) and len(ranked) < query.limit:
            rows += _window_rows(session, query, [rid for rid, _ in scored[first:]])
            ranked = _order(rows, scores)[: query.limit]
            first = len(scored)
    except TypeError:  # a raw writer's value of the wrong type: SQL's own order decides
        return _ranked_fully(session, query)
    every_match = len(scored) < window
    exact = len(ranked) == query.limit and (first < len(scored) or ranked[-1][0] < scored[-1][1])
    if not (every_match or exact):
        return _ranked_fully(session, query)
    claims = {claim.id: claim for claim in revalidated(session, [r[-1] for r in ranked])}
    return [
        FtsHit(claim_id=cid, rank=float(score), claim=claims.get(cid))
        for score, _, _, cid, _ in ranked
    ]


# Where a claim row's tie-break columns sit (the rows are read as CLAIM_COLUMNS).
_ID_AT = CLAIM_COLUMNS.index("id")
_IMPORTANCE_AT = CLAIM_COLUMNS.index("importance")
_CREATED_AT = CLAIM_COLUMNS.index("created_at")
_Ranked = tuple[float, Any, Any, Any, Sequence[object]]


def _through_ties(scored: Sequence[tuple[int, float]], limit: int) -> int:
    """How many of the score-ordered matches are the best `limit` and those tied with the
    last of them (none of the rest can then outrank a hit kept)."""
    if len(scored) <= limit:
        return len(scored)
    last = scored[limit - 1][1]
    count = limit
    while count < len(scored) and scored[count][1] == last:
        count += 1
    return count


def _window_rows(session: Session, query: LexicalQuery, rids: list[int]) -> list[Sequence[object]]:
    """The rows of these matches that satisfy the hit predicates, rowid first."""
    # `+m.agent_id`: the rows are found by rowid alone (one B-tree descent each), not
    # through the (agent_id, rowid) index and then the table; the owner is still checked.
    predicates, bound = _row_predicates(query, owner=session.dialect.owner_probe)
    return session.execute(
        f"""SELECT m.rid, {CLAIM_SELECT} FROM agent_memory m
            WHERE {session.dialect.id_list("m.rid")} AND {predicates}""",
        [rids, *bound],
    ).fetchall()


def _order(rows: Sequence[Sequence[object]], scores: dict[int, float]) -> list[_Ranked]:
    """(score, -importance, -created_at, id, claim columns) best first: FtsHit's order."""
    ranked: list[_Ranked] = []
    for row in rows:
        values = row[1:]
        score = scores[row[0]]  # type: ignore[index]
        importance, created = values[_IMPORTANCE_AT], values[_CREATED_AT]
        ranked.append((score, -importance, -created, values[_ID_AT], values))  # type: ignore[operator]
    ranked.sort()  # ids are unique: the columns themselves are never compared
    return ranked


def _row_predicates(query: LexicalQuery, *, owner: str = "m.agent_id") -> tuple[str, list[object]]:
    """What a hit's row must satisfy (owner, recallable, unfenced, scope, short terms) and
    its parameters."""
    scope_sql, scope_params = scope_clause(query.scope_filter)
    like_sql = "".join(" AND m.content LIKE ? ESCAPE '\\'" for _ in query.short_terms)
    predicates = f"{owner} = ? AND {recallable('m.')} AND {NOT_FENCED} AND {scope_sql}"
    likes = [like_pattern(term) for term in query.short_terms]
    return predicates + like_sql, [query.agent_id, *scope_params, *likes]


def _ranked_fully(session: Session, query: LexicalQuery) -> list[FtsHit]:
    """`_ranked`'s answer from every match joined to its row."""
    table = owner_table(query.agent_id)
    match = match_expression(query.long_terms, all_terms=query.all_terms)
    predicates, bound = _row_predicates(query)
    sql = f"""
      SELECT m.id, bm25({table}) AS score
      FROM {table} f JOIN agent_memory m ON m.rid = f.rowid
      WHERE {table} MATCH ? AND {predicates}
      ORDER BY score, m.importance DESC, m.created_at DESC, m.id
      LIMIT ?"""
    params = [match, *bound, query.limit]
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
