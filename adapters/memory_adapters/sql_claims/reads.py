"""Claim reads: by id, by slot, management listing, authoritative re-validation, pending and
ready embeddings, lineage. Every read is fenced by a pending clear in the same statement
(R-FORGET-3), and a row a raw writer corrupted is skipped, never allowed to fail the batch
(R-TIME-4)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

import attrs

from memory_adapters.sql_claims.queries import (
    CLAIM_SELECT,
    NOT_FENCED,
    RECALLABLE_KINDS_SQL,
    claims_of,
    exact_scope,
    owned_row,
    recallable,
    scope_clause,
)
from memory_adapters.sql_claims.rows import CLAIM_COLUMNS, CorruptRow
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import Claim, EmbeddingIdentity
from memory_core.domain.errors import NotFound, ScopeError, ValidationError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.ports.claims import Derivation, DerivationKind, PendingEmbedding

__all__ = [
    "distinct_ids",
    "find_live_by_slot",
    "get",
    "list_applicable_by_ids",
    "list_claims",
    "list_derivations",
    "list_pending_embeddings",
    "list_ready_ids",
    "revalidated",
]

# Rows read per slot lookup: the newest valid one wins, and a corrupt newest row must not
# hide an older valid holder (R-TIME-4). Normally there is exactly one.
_SLOT_PROBE = 8
_log = logging.getLogger(__name__)
# Every turn lists the agent's newest claims for the working projection, and structuring a
# row into a Claim (~0.1 ms: the strict converter, then the domain's validation) was most of
# that read's cost. A row read back with every column unchanged is the same claim, so each
# agent's last listing is kept, keyed by the raw column values, and only a row that differs
# is structured again. Only the last listing is kept — a deleted claim leaves the cache with
# the agent's next listing — and only for a bounded number of agents.
_LAST_LISTING: dict[tuple[str, str], dict[tuple[object, ...], Claim]] = {}
_LAST_LISTING_AGENTS = 1_024
# Re-validation structures every candidate of every turn (~0.1 ms a row, 50-70 rows a
# turn), and a conversation keeps meeting the same rows. A row whose raw columns are
# unchanged is the same claim, so structured rows are kept with their raw values — a changed
# row (revision, lifecycle, embedding, any column) no longer matches and is structured
# afresh, and a row the query no longer returns is never looked up. The access columns are
# the exception: every turn writes them for what it showed, so they are not compared; a
# kept claim whose access columns moved gets just those two, converted as the rest would be.
# Two generations of at most this many rows each: a claim no read has returned since the
# last two rotations, a deleted one included, is no longer held (R-FORGET-1 for process
# memory).
_REVALIDATED_ROWS = 4_096
_COUNT_AT = CLAIM_COLUMNS.index("access_count")
_SEEN_AT = CLAIM_COLUMNS.index("last_accessed")
_ACCESS_COLUMNS = sorted((_COUNT_AT, _SEEN_AT))

_ID_AT = CLAIM_COLUMNS.index("id")
# The raw values a claim was structured from, and the claim.
_Kept = tuple[tuple[object, ...], Claim]


def _without_access(values: Sequence[object]) -> tuple[object, ...]:
    first, second = _ACCESS_COLUMNS
    return (*values[:first], *values[first + 1 : second], *values[second + 1 :])


def _same_access_types(values: Sequence[object], kept: Sequence[object]) -> bool:
    # Equal is not enough for the access columns: 1 == 1.0 == True, and the reader accepts
    # only some of those types.
    return type(values[_COUNT_AT]) is type(kept[_COUNT_AT]) and type(values[_SEEN_AT]) is type(
        kept[_SEEN_AT]
    )


class _RowClaims:
    """Structured claims by (dialect, claim id), each with the raw values it was structured
    from, in two bounded generations: a row is reused only when those values are unchanged.
    Keyed by the id rather than by the values: hashing every column of every candidate row
    (content included) cost more than the comparison that a reused row needs anyway."""

    def __init__(self, rows: int) -> None:
        self._rows = rows
        self._current: dict[tuple[str, object], _Kept] = {}
        self._previous: dict[tuple[str, object], _Kept] = {}

    def __len__(self) -> int:
        return len(self._current) + len(self._previous)

    def contents(self) -> set[str]:
        """Every held claim's content (for the tests of what the process still holds)."""
        return {
            kept[1].content for part in (self._current, self._previous) for kept in part.values()
        }

    def claims(self, session: Session, rows: Iterable[Sequence[object]]) -> list[Claim]:
        """`claims_of(rows)`, structuring only rows not held (corrupt ones are skipped)."""
        dialect = type(session.dialect).__qualname__
        read = session.dialect.row_reader.claim
        claims: list[Claim] = []
        for row in rows:
            values = tuple(row)
            key = (dialect, values[_ID_AT])
            try:
                kept = self._current.get(key) or self._previous.get(key)
                claim = None if kept is None else _reused(session, values, kept)
                if claim is None:
                    claim = read(values)
            except TypeError:  # a driver's unhashable column value: structured, not held
                claims.extend(claims_of(session, [values]))
                continue
            except CorruptRow as exc:
                _log.warning("skipping corrupt claim row: %s", exc)
                continue
            self._hold(key, (values, claim))
            claims.append(claim)
        return claims

    def _hold(self, key: tuple[str, object], kept: _Kept) -> None:
        if key not in self._current and len(self._current) >= self._rows:
            # Whole-dict swaps: a concurrent reader sees one generation or the other, and
            # at worst structures a row again.
            self._previous, self._current = self._current, {}
        self._current[key] = kept


def _reused(session: Session, values: tuple[object, ...], kept: _Kept) -> Claim | None:
    """The kept claim for these values: itself when every column is unchanged (most rows,
    compared in one step), with the new access columns when only those moved, else None
    (the row is structured afresh; also when an access column is of the wrong type, so the
    row is then skipped as corrupt)."""
    held, claim = kept
    if not _same_access_types(values, held):
        return None
    if values == held:
        return claim
    if _without_access(values) != _without_access(held):
        return None
    read = session.dialect.row_reader.claim_column
    try:
        access_count = read("access_count", values[_COUNT_AT])
        last_accessed = read("last_accessed", values[_SEEN_AT])
    except (TypeError, ValueError, OverflowError):
        return None
    return attrs.evolve(claim, access_count=access_count, last_accessed_at=last_accessed)


_REVALIDATED = _RowClaims(_REVALIDATED_ROWS)


def revalidated(session: Session, rows: Iterable[Sequence[object]]) -> list[Claim]:
    """The claims of rows a re-validating statement read (CLAIM_COLUMNS order): structured
    once per unchanged row, corrupt ones skipped. A search that reads its hits' authoritative
    rows itself structures them here, so the turn's re-validation shares the held rows."""
    return _REVALIDATED.claims(session, rows)


_READY = (
    "m.embedding_state = 'ready' AND m.embedding_provider = ?"
    " AND m.embedding_model = ? AND m.embedding_dim = ?"
)


def distinct_ids(claim_ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(cid for cid in claim_ids if isinstance(cid, str)))


def get(session: Session, agent_id: str, claim_id: str) -> Claim:
    row = owned_row(session, agent_id, claim_id)
    if row is None:
        raise NotFound(f"no claim {claim_id} for this agent")
    return session.dialect.row_reader.claim(row)


def find_live_by_slot(session: Session, agent_id: str, scope: Scope, slot: str) -> Claim | None:
    """The newest recallable holder of `slot` in exactly `scope`, through the partial index
    `agent_memory_live_slot` (the WHERE repeats its predicate so the planner can use it)."""
    if not isinstance(scope, Scope):
        raise ScopeError("scope", "must be a Scope")
    if not isinstance(slot, str) or not slot.strip():
        raise ValidationError("slot", "must be a non-empty slot key")
    scope_sql, scope_params = exact_scope(scope)
    sql = f"""SELECT {CLAIM_SELECT} FROM agent_memory m
              WHERE m.agent_id = ? AND {scope_sql} AND m.slot = ? AND m.slot IS NOT NULL
                AND {recallable("m.")} AND {NOT_FENCED}
              ORDER BY m.created_at DESC, m.id DESC LIMIT {_SLOT_PROBE}"""
    found = claims_of(session, session.execute(sql, (agent_id, *scope_params, slot)).fetchall())
    return found[0] if found else None


def list_claims(
    session: Session,
    agent_id: str,
    *,
    scope_filter: ScopeFilter | None,
    include_inactive: bool,
    limit: int,
    after_id: str | None,
) -> list[Claim]:
    if limit <= 0:
        return []
    where = ["m.agent_id = ?", f"m.kind IN {RECALLABLE_KINDS_SQL}", NOT_FENCED]
    params: list[object] = [agent_id]
    if not include_inactive:
        where.append(recallable("m."))
    if scope_filter is not None:
        scope_sql, scope_params = scope_clause(scope_filter)
        where.append(scope_sql)
        params += scope_params
    if after_id is not None:
        # Keyset paging; an unknown cursor compares with NULL and yields an empty page.
        where.append(
            "(m.created_at, m.id) < (SELECT created_at, id FROM agent_memory"
            " WHERE agent_id = ? AND id = ?)"
        )
        params += [agent_id, after_id]
    sql = (
        f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE {' AND '.join(where)}"
        " ORDER BY m.created_at DESC, m.id DESC LIMIT ?"
    )
    return _reusing_last_listing(session, agent_id, session.execute(sql, (*params, limit)))


def _reusing_last_listing(
    session: Session, agent_id: str, rows: Iterable[Sequence[object]]
) -> list[Claim]:
    """`claims_of(rows)`, reusing the agent's last listing for rows whose every column is
    unchanged (the dialect is part of the key: it decides how the columns read)."""
    key = (type(session.dialect).__qualname__, agent_id)
    previous = _LAST_LISTING.get(key, {})
    read = session.dialect.row_reader.claim
    listing: dict[tuple[object, ...], Claim] = {}
    claims: list[Claim] = []
    for values in rows:
        raw = tuple(values)
        try:
            claim = previous.get(raw)
        except TypeError:  # a driver's unhashable column value (a list, a dict): no reuse
            return [*claims, *claims_of(session, [raw, *rows])]
        if claim is None:
            try:
                claim = read(raw)
            except CorruptRow as exc:
                _log.warning("skipping corrupt claim row: %s", exc)
                continue
        listing[raw] = claim
        claims.append(claim)
    if key not in _LAST_LISTING and len(_LAST_LISTING) >= _LAST_LISTING_AGENTS:
        _LAST_LISTING.clear()  # bounded by starting over; single dict operations are atomic
    _LAST_LISTING[key] = listing
    return claims


def list_applicable_by_ids(
    session: Session,
    agent_id: str,
    claim_ids: Sequence[str],
    *,
    scope_filter: ScopeFilter,
    embedding: EmbeddingIdentity | None,
    revisions: Mapping[str, int] | None,
) -> list[Claim]:
    ordered = distinct_ids(claim_ids)
    if not ordered:
        return []
    scope_sql, scope_params = scope_clause(scope_filter)
    # The owner predicate probes the id key (see Dialect.owner_probe); the owner is still
    # checked on every row found.
    where = [
        f"{session.dialect.owner_probe} = ?",
        session.dialect.id_list("m.id"),
        recallable("m."),
        NOT_FENCED,
        scope_sql,
    ]
    params: list[object] = [agent_id, ordered, *scope_params]
    if embedding is not None:
        where.append(_READY)
        params += [embedding.provider, embedding.model, embedding.dim]
    sql = f"SELECT {CLAIM_SELECT} FROM agent_memory m WHERE {' AND '.join(where)}"
    by_id = {claim.id: claim for claim in revalidated(session, session.execute(sql, params))}
    if revisions:
        by_id = {
            cid: claim
            for cid, claim in by_id.items()
            if cid not in revisions or revisions[cid] == claim.revision
        }
    return [by_id[cid] for cid in ordered if cid in by_id]


def list_pending_embeddings(
    session: Session, agent_id: str, *, limit: int
) -> list[PendingEmbedding]:
    """Three columns, not whole claims: what an embedding batch reads (issue 15). A row
    whose content is not text is corrupt: logged by id and skipped, as `claims_of` does."""
    if limit <= 0:
        return []
    tail = f"""FROM agent_memory m
              WHERE m.agent_id = ? AND m.embedding_state = 'pending' AND {recallable("m.")}
                AND {NOT_FENCED}
              ORDER BY m.created_at, m.id LIMIT ?"""
    rows = session.dialect.rows_at_once(
        session, ("m.id", "m.revision", "m.content"), tail, (agent_id, limit)
    )
    pending: list[PendingEmbedding] = []
    for claim_id, revision, content in rows:
        if not isinstance(content, str) or not isinstance(revision, int):
            _log.warning("skipping corrupt claim row: %s", claim_id)
            continue
        pending.append(PendingEmbedding(id=str(claim_id), revision=revision, content=content))
    return pending


def list_ready_ids(session: Session, agent_id: str, identity: EmbeddingIdentity) -> list[str]:
    sql = f"""SELECT m.id FROM agent_memory m
              WHERE m.agent_id = ? AND {_READY} AND {recallable("m.")} AND {NOT_FENCED}
              ORDER BY m.id"""
    rows = session.execute(sql, (agent_id, identity.provider, identity.model, identity.dim))
    return [str(row[0]) for row in rows]


def list_derivations(session: Session, agent_id: str, claim_id: str) -> list[Derivation]:
    rows = session.execute(
        """SELECT parent_memory_id, child_memory_id, derivation_kind, created_at
           FROM agent_memory_derivation
           WHERE agent_id = ? AND (parent_memory_id = ? OR child_memory_id = ?)
           ORDER BY created_at, parent_memory_id, child_memory_id""",
        (agent_id, claim_id, claim_id),
    ).fetchall()
    return [
        Derivation(
            parent_id=parent,
            child_id=child,
            kind=DerivationKind(kind),
            created_at=session.instant(created),
        )
        for parent, child, kind, created in rows
    ]
