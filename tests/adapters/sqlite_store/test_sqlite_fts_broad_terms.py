"""Broad FTS terms: a term in most rows is read newest first, not bm25-ranked (R-READ-3).

The thresholds are lowered so a small store has broad terms: "day" is in every row here, as
it is in every weekday of a real one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memory_adapters.sqlite_store import ApswClaimStore
from memory_adapters.sqlite_store.fts import search as fts
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.ports.claims import MatchMode

EVERYTHING = ScopeFilter.from_context(ScopeContext(session_id="s1"))
ROWS = 40


@pytest.fixture(autouse=True)
def _small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fts, "BROAD_MIN_DOCS", 10)
    monkeypatch.setattr(fts, "_doc_counts", {})


def _seed(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> list[str]:
    """ROWS claims of agent-a, oldest first, each naming a weekday; two also name a zebra.
    agent-b holds the same texts, newer, so a leak would show."""
    ids = []
    for i in range(ROWS):
        text = f"note {i} on monday" + (" about the zebra" if i in (3, 7) else "")
        clock.advance(1)
        ids.append(
            store.insert(make_draft(text), origin=WriteOrigin.EXTRACTION, now=clock.now()).claim.id
        )
    for i in range(ROWS):
        clock.advance(1)
        store.insert(
            make_draft(f"note {i} on monday", agent_id="agent-b"),
            origin=WriteOrigin.EXTRACTION,
            now=clock.now(),
        )
    return ids


def _search(store: ApswClaimStore, terms: list[str], limit: int, mode: MatchMode) -> list[str]:
    hits = store.search_fts("agent-a", terms, scope_filter=EVERYTHING, limit=limit, match_mode=mode)
    return [hit.claim_id for hit in hits]


def test_only_terms_in_most_rows_are_broad(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    """R-READ-3: 'day' (every row) is broad, 'zebra' (2 rows) is not; with the default
    thresholds a store this small has no broad term at all."""
    _seed(store, clock, make_draft)
    with store._read() as session:
        assert fts.broad_terms(session, "agent-a", ["day", "zebra", "monday"]) == {"day", "monday"}
        fts.BROAD_MIN_DOCS = 5_000  # the monkeypatch restores it
        assert fts.broad_terms(session, "agent-a", ["day", "zebra"]) == frozenset()


def test_selective_terms_rank_first_and_broad_ones_fill_with_the_newest_rows(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    """R-READ-3: the zebra rows (bm25) come first, then the owner's newest 'day' rows, never
    another agent's, each once."""
    ids = _seed(store, clock, make_draft)
    found = _search(store, ["zebra", "day"], limit=6, mode=MatchMode.ANY)
    assert set(found[:2]) == {ids[3], ids[7]}
    assert found[2:] == [ids[39], ids[38], ids[37], ids[36]]


def test_a_broad_only_query_returns_the_newest_matches_up_to_the_limit(
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R-READ-3: the hits are the owner's newest admitted rows; a window filled by rows the
    scope filter refuses widens until enough pass or the matches run out."""
    ids = _seed(store, clock, make_draft)
    for i in range(12):  # newer than all of agent-a's, in a session the filter does not admit
        clock.advance(1)
        other = make_draft(f"note {i} on monday", scope=Scope.session("s2"))
        store.insert(other, origin=WriteOrigin.EXTRACTION, now=clock.now())
    monkeypatch.setattr(fts, "_WINDOW_FACTOR", 1)
    monkeypatch.setattr(fts, "_WINDOW_MIN", 4)
    assert _search(store, ["day"], limit=5, mode=MatchMode.ANY) == ids[::-1][:5]
    assert _search(store, ["day"], limit=ROWS + 10, mode=MatchMode.ANY) == ids[::-1]


def test_all_mode_still_ranks_every_term(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> None:
    """R-READ-3: ALL mode intersects the terms, so a broad one narrows nothing away."""
    ids = _seed(store, clock, make_draft)
    assert set(_search(store, ["zebra", "day"], limit=6, mode=MatchMode.ALL)) == {ids[3], ids[7]}


def test_a_term_is_looked_up_no_further_than_its_first_narrow_trigram(
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R-READ-1: 'zebra' starts with a trigram in 2 rows: one vocabulary lookup decides it is
    not broad (a turn's rare terms cost a lookup each, not one per trigram); 'monday' needs
    every one of its four, all broad."""
    _seed(store, clock, make_draft)
    looked_up: list[str] = []
    counted = fts._counted

    def counting(conn: object, table: str, term: str, count: Callable[[], int]) -> int:
        looked_up.append(term)
        return counted(conn, table, term, count)  # type: ignore[arg-type]

    monkeypatch.setattr(fts, "_counted", counting)
    with store._read() as session:
        assert fts.broad_terms(session, "agent-a", ["zebra", "monday"]) == {"monday"}
    assert looked_up == ["", "zeb", "mon", "ond", "nda", "day"]
