"""Lexical recall on PostgreSQL (R-READ-3): substring matching ranked by BM25.

Why not `tsvector`: the SQLite store matches every term of ≥3 code points as a substring in
any script (FTS5 trigram), so "ervice" finds "services" and a CJK phrase needs no word
breaker. A 'simple' tsvector only matches whole words and would answer differently behind
the same port. So a term matches where `content ILIKE '%term%'`, which pg_trgm's GIN index
serves (owner first when btree_gin is installed too); without pg_trgm the same statement
runs on the owner's rows through the owner indexes — identical answers, only slower.

Ranking is BM25 over those substring matches (k1 = 1.2, b = 0.75, length in code points),
with document frequencies and the average length taken from the rows that match at least
one term; ties by importance DESC, created_at DESC, id. Terms shorter than 3 code points
(a two-character CJK word, "Go") use the bounded fallback of the SQLite store: a LIKE over
the owner's most important rows per admitted scope, hits ranked 0.0 after every lexical
hit. Terms are always bound parameters with LIKE metacharacters escaped, so query text is
never syntax. The owner and scope predicates are in the same statement, before LIMIT.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from memory_adapters.postgres_store.claim_schema import recallable
from memory_adapters.postgres_store.queries import NOT_FENCED, scope_clause
from memory_core.domain.scope import ScopeFilter
from memory_core.ports.claims import FtsHit, MatchMode

__all__ = ["LIKE_SCAN_LIMIT", "MIN_FTS_TERM", "like_pattern", "search"]

MIN_FTS_TERM = 3
# How many of the owner's most important rows per scope the short-term fallback inspects.
LIKE_SCAN_LIMIT = 2_000
_MAX_TERMS = 32
_K1, _B = 1.2, 0.75


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _clean(terms: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for term in terms:
        stripped = term.strip() if isinstance(term, str) else ""
        if stripped:
            seen.setdefault(stripped, None)
    return list(seen)[:_MAX_TERMS]


def search(
    conn: psycopg.Connection,
    agent_id: str,
    terms: Sequence[str],
    *,
    scope_filter: ScopeFilter,
    limit: int,
    match_mode: MatchMode,
) -> list[FtsHit]:
    cleaned = _clean(terms)
    if not cleaned or limit <= 0 or not scope_filter.scopes:
        return []
    long_terms = [term for term in cleaned if len(term) >= MIN_FTS_TERM]
    short_terms = [term for term in cleaned if len(term) < MIN_FTS_TERM]
    if match_mode is MatchMode.ALL:
        if long_terms:
            return _bm25(
                conn, agent_id, long_terms, short_terms, scope_filter=scope_filter, limit=limit,
                all_=True,
            )  # fmt: skip
        return _fallback(
            conn, agent_id, short_terms, scope_filter=scope_filter, limit=limit, all_=True
        )
    hits = (
        _bm25(conn, agent_id, long_terms, [], scope_filter=scope_filter, limit=limit, all_=False)
        if long_terms
        else []
    )
    if short_terms and len(hits) < limit:
        seen = {hit.claim_id for hit in hits}
        extra = _fallback(
            conn, agent_id, short_terms, scope_filter=scope_filter, limit=limit + len(hits),
            all_=False,
        )  # fmt: skip
        hits += [hit for hit in extra if hit.claim_id not in seen][: limit - len(hits)]
    return hits


def _bm25(
    conn: psycopg.Connection,
    agent_id: str,
    long_terms: list[str],
    short_terms: list[str],
    *,
    scope_filter: ScopeFilter,
    limit: int,
    all_: bool,
) -> list[FtsHit]:
    scope_sql, scope_params = scope_clause(scope_filter)
    patterns = [like_pattern(term) for term in long_terms]
    # One ILIKE per term (not ILIKE ANY(array)): a GIN index serves each, OR-ed as bitmaps.
    joiner = " AND " if all_ else " OR "
    match_sql = joiner.join("m.content ILIKE %s" for _ in patterns)
    # In ALL mode short terms narrow the candidates in the same statement, before LIMIT.
    short_sql = "".join(" AND m.content ILIKE %s" for _ in short_terms)
    sql = f"""
      WITH terms AS (
        SELECT lower(t.term) AS needle, t.pattern
        FROM unnest(%s::text[], %s::text[]) AS t(term, pattern)
      ),
      cand AS (
        SELECT m.id, m.importance, m.created_at, m.content, lower(m.content) AS body,
               length(m.content) AS len
        FROM agent_memory m
        WHERE m.agent_id = %s AND {recallable("m.")} AND {NOT_FENCED} AND {scope_sql}
          AND ({match_sql}){short_sql}
      ),
      tf AS (
        SELECT c.id, t.needle, greatest(1,
                 (length(c.body) - length(replace(c.body, t.needle, ''))) / length(t.needle)
               )::float8 AS tf
        FROM cand c CROSS JOIN terms t
        WHERE c.content ILIKE t.pattern
      ),
      df AS (SELECT needle, count(*)::float8 AS df FROM tf GROUP BY needle),
      stats AS (SELECT count(*)::float8 AS n, greatest(avg(len), 1)::float8 AS avglen FROM cand)
      SELECT c.id,
             -sum(ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
                  * tf.tf * {_K1 + 1} / (tf.tf + {_K1} * (1 - {_B} + {_B} * c.len / s.avglen)))
               AS score
      FROM cand c JOIN tf ON tf.id = c.id JOIN df ON df.needle = tf.needle CROSS JOIN stats s
      GROUP BY c.id, c.importance, c.created_at
      ORDER BY score, c.importance DESC, c.created_at DESC, c.id
      LIMIT %s"""
    params = [
        long_terms,
        patterns,
        agent_id,
        *scope_params,
        *patterns,
        *(like_pattern(term) for term in short_terms),
        limit,
    ]
    return [FtsHit(claim_id=cid, rank=float(score)) for cid, score in conn.execute(sql, params)]


def _fallback(
    conn: psycopg.Connection,
    agent_id: str,
    short_terms: list[str],
    *,
    scope_filter: ScopeFilter,
    limit: int,
    all_: bool,
) -> list[FtsHit]:
    # One branch per admitted scope, each an index range scan of the scoped-recall index
    # bounded by LIKE_SCAN_LIMIT; the LIKEs then run over at most that many rows per scope.
    branches: list[str] = []
    params: list[object] = []
    for scope in scope_filter.scopes:
        if scope.is_agent:
            scope_sql, scope_params = "m.scope_type = 'agent' AND m.scope_id IS NULL", []
        else:
            scope_sql = "m.scope_type = %s AND m.scope_id = %s"
            scope_params = [scope.kind.value, scope.scope_id]
        branches.append(
            f"""(SELECT m.id, m.content, m.importance, m.created_at FROM agent_memory m
                 WHERE m.agent_id = %s AND {scope_sql} AND {recallable("m.")} AND {NOT_FENCED}
                 ORDER BY m.importance DESC, m.created_at DESC, m.id LIMIT %s)"""
        )
        params += [agent_id, *scope_params, LIKE_SCAN_LIMIT]
    matched = " + ".join("(s.content ILIKE %s)::int" for _ in short_terms)
    need = len(short_terms) if all_ else 1
    sql = f"""
      SELECT s.id FROM (
        SELECT s.*, {matched} AS hits FROM ({" UNION ALL ".join(branches)}) s
      ) s
      WHERE s.hits >= %s
      ORDER BY s.hits DESC, s.importance DESC, s.created_at DESC, s.id
      LIMIT %s"""
    patterns = [like_pattern(term) for term in short_terms]
    rows = conn.execute(sql, [*patterns, *params, need, limit])
    # Fallback hits carry no lexical score; 0.0 ranks them after every BM25 hit (< 0).
    return [FtsHit(claim_id=cid, rank=0.0) for (cid,) in rows]
