"""Lexical recall (R-READ-3): which terms go where, written once; the dialect ranks them.

Terms are trimmed, deduplicated and capped. Terms of ≥3 code points go to the dialect's
index (FTS5 trigrams, or pg_trgm-served substring BM25); shorter ones — a two-character CJK
word, "Go" — use the dialect's bounded LIKE fallback over the owner's most important rows
per admitted scope, ranked 0.0 after every lexical hit. In ALL mode the short terms narrow
the index's candidates in the same statement instead. Terms are always bound parameters
with LIKE metacharacters escaped, so query text is never syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from memory_adapters.sql_claims.queries import NOT_FENCED, exact_scope, recallable
from memory_adapters.sql_claims.session import Session
from memory_core.domain.scope import ScopeFilter
from memory_core.ports.claims import FtsHit, MatchMode

__all__ = [
    "LIKE_SCAN_LIMIT",
    "MIN_FTS_TERM",
    "LexicalQuery",
    "clean_terms",
    "like_pattern",
    "search",
    "top_rows_per_scope",
]

MIN_FTS_TERM = 3
# How many of the owner's most important rows per scope the short-term fallback inspects.
LIKE_SCAN_LIMIT = 2_000
_MAX_TERMS = 32


def like_pattern(term: str) -> str:
    """`%term%` with LIKE's metacharacters escaped by backslash."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def clean_terms(terms: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for term in terms:
        stripped = term.strip() if isinstance(term, str) else ""
        if stripped:
            seen.setdefault(stripped, None)
    return list(seen)[:_MAX_TERMS]


@attrs.frozen(kw_only=True)
class LexicalQuery:
    """One statement's worth of a search: the owner, the terms by length, the admitted
    scopes, how many hits, and whether every term must match."""

    agent_id: str
    long_terms: tuple[str, ...]
    short_terms: tuple[str, ...]
    scope_filter: ScopeFilter
    limit: int
    all_terms: bool

    @property
    def needed(self) -> int:
        """How many short terms a fallback row must contain."""
        return len(self.short_terms) if self.all_terms else 1


def top_rows_per_scope(query: LexicalQuery, columns: str) -> tuple[list[str], list[object]]:
    """One SELECT of `columns` per admitted scope: the owner's LIKE_SCAN_LIMIT most
    important recallable rows in it, an index range scan of the scoped-recall index, so a
    fallback LIKE runs over at most that many rows per scope."""
    selects: list[str] = []
    params: list[object] = []
    for scope in query.scope_filter.scopes:
        scope_sql, scope_params = exact_scope(scope)
        selects.append(
            f"""SELECT {columns} FROM agent_memory m
                WHERE m.agent_id = ? AND {scope_sql} AND {recallable("m.")} AND {NOT_FENCED}
                ORDER BY m.importance DESC, m.created_at DESC, m.id LIMIT ?"""
        )
        params += [query.agent_id, *scope_params, LIKE_SCAN_LIMIT]
    return selects, params


def search(
    session: Session,
    agent_id: str,
    terms: Sequence[str],
    *,
    scope_filter: ScopeFilter,
    limit: int,
    match_mode: MatchMode,
) -> list[FtsHit]:
    cleaned = clean_terms(terms)
    if not cleaned or limit <= 0 or not scope_filter.scopes:
        return []
    dialect = session.dialect
    query = LexicalQuery(
        agent_id=agent_id,
        long_terms=tuple(term for term in cleaned if len(term) >= MIN_FTS_TERM),
        short_terms=tuple(term for term in cleaned if len(term) < MIN_FTS_TERM),
        scope_filter=scope_filter,
        limit=limit,
        all_terms=MatchMode(match_mode) is MatchMode.ALL,
    )
    if query.all_terms:
        if query.long_terms:
            return dialect.search_long(session, query)
        return dialect.search_short(session, query)
    hits = (
        dialect.search_long(session, attrs.evolve(query, short_terms=()))
        if query.long_terms
        else []
    )
    if query.short_terms and len(hits) < limit:
        seen = {hit.claim_id for hit in hits}
        extra = dialect.search_short(
            session, attrs.evolve(query, long_terms=(), limit=limit + len(hits))
        )
        hits += [hit for hit in extra if hit.claim_id not in seen][: limit - len(hits)]
    return hits
