"""PostgreSQL's lexical recall (R-READ-3): substring matching ranked by BM25.

Why not `tsvector`: the SQLite store matches every term of ≥3 code points as a substring in
any script (FTS5 trigram), so "ervice" finds "services" and a CJK phrase needs no word
breaker. A 'simple' tsvector only matches whole words and would answer differently behind
the same port. So a term matches where `content ILIKE '%term%'`, which pg_trgm's GIN index
serves (owner first when btree_gin is installed too); without pg_trgm the same statement
runs on the owner's rows through the owner indexes — identical answers, only slower.

Ranking is BM25 over those substring matches (k1 = 1.2, b = 0.75, length in code points),
with document frequencies and the average length taken from the rows that match at least
one term; ties by importance DESC, created_at DESC, id. `sql_claims.lexical` decides which
terms come here and which go to the short-term fallback, a bounded ILIKE over the owner's
most important rows per admitted scope. The owner and scope predicates are in the same
statement, before LIMIT.
"""

from __future__ import annotations

from memory_adapters.sql_claims.lexical import LexicalQuery, like_pattern, top_rows_per_scope
from memory_adapters.sql_claims.queries import NOT_FENCED, recallable, scope_clause
from memory_adapters.sql_claims.session import Session
from memory_core.ports.claims import FtsHit

__all__ = ["bm25", "short"]

_K1, _B = 1.2, 0.75


def bm25(session: Session, query: LexicalQuery) -> list[FtsHit]:
    scope_sql, scope_params = scope_clause(query.scope_filter)
    patterns = [like_pattern(term) for term in query.long_terms]
    # One ILIKE per term (not ILIKE ANY(array)): a GIN index serves each, OR-ed as bitmaps.
    match_sql = (" AND " if query.all_terms else " OR ").join("m.content ILIKE ?" for _ in patterns)
    # In ALL mode short terms narrow the candidates in the same statement, before LIMIT.
    short_sql = "".join(" AND m.content ILIKE ?" for _ in query.short_terms)
    sql = f"""
      WITH terms AS (
        SELECT lower(t.term) AS needle, t.pattern
        FROM unnest(?::text[], ?::text[]) AS t(term, pattern)
      ),
      cand AS (
        SELECT m.id, m.importance, m.created_at, m.content, lower(m.content) AS body,
               length(m.content) AS len
        FROM agent_memory m
        WHERE m.agent_id = ? AND {recallable("m.")} AND {NOT_FENCED} AND {scope_sql}
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
      LIMIT ?"""
    params = [
        query.long_terms,
        patterns,
        query.agent_id,
        *scope_params,
        *patterns,
        *(like_pattern(term) for term in query.short_terms),
        query.limit,
    ]
    return [FtsHit(claim_id=cid, rank=float(score)) for cid, score in session.execute(sql, params)]


def short(session: Session, query: LexicalQuery) -> list[FtsHit]:
    """ILIKE over each admitted scope's most important rows, ranked by terms hit."""
    selects, params = top_rows_per_scope(query, "m.id, m.content, m.importance, m.created_at")
    matched = " + ".join("(s.content ILIKE ?)::int" for _ in query.short_terms)
    union = " UNION ALL ".join(f"({select})" for select in selects)
    sql = f"""
      SELECT s.id FROM (SELECT s.*, {matched} AS hits FROM ({union}) s) s
      WHERE s.hits >= ?
      ORDER BY s.hits DESC, s.importance DESC, s.created_at DESC, s.id
      LIMIT ?"""
    patterns = [like_pattern(term) for term in query.short_terms]
    rows = session.execute(sql, [*patterns, *params, query.needed, query.limit])
    # Fallback hits carry no lexical score; 0.0 ranks them after every BM25 hit (< 0).
    return [FtsHit(claim_id=cid, rank=0.0) for (cid,) in rows]
