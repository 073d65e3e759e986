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

from memory_adapters.sql_claims.session import Session
from memory_core.domain.scope import ScopeFilter
from memory_core.ports.claims import FtsHit, MatchMode

__all__ = ["LIKE_SCAN_LIMIT", "MIN_FTS_TERM", "clean_terms", "like_pattern", "search"]

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
    long_terms = [term for term in cleaned if len(term) >= MIN_FTS_TERM]
    short_terms = [term for term in cleaned if len(term) < MIN_FTS_TERM]
    if MatchMode(match_mode) is MatchMode.ALL:
        if long_terms:
            return dialect.search_long(
                session,
                agent_id,
                long_terms,
                short_terms,
                scope_filter=scope_filter,
                limit=limit,
                all_terms=True,
            )
        return dialect.search_short(
            session, agent_id, short_terms, scope_filter=scope_filter, limit=limit, all_terms=True
        )
    hits = (
        dialect.search_long(
            session,
            agent_id,
            long_terms,
            [],
            scope_filter=scope_filter,
            limit=limit,
            all_terms=False,
        )
        if long_terms
        else []
    )
    if short_terms and len(hits) < limit:
        seen = {hit.claim_id for hit in hits}
        extra = dialect.search_short(
            session,
            agent_id,
            short_terms,
            scope_filter=scope_filter,
            limit=limit + len(hits),
            all_terms=False,
        )
        hits += [hit for hit in extra if hit.claim_id not in seen][: limit - len(hits)]
    return hits
