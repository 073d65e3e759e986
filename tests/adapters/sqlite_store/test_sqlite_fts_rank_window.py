"""The bm25 window of the FTS search gives the full statement's answer (R-READ-3), and its
hits carry the authoritative rows re-validation would read.

`_ranked` ranks a window of the best matches from the owner's index alone and joins only
those to their rows; when it cannot prove the window's answer complete (rows filtered out
inside it, ties at its edge, a value a raw writer typed wrongly) it runs the full statement.
Either way the hits, their order and their scores are the full statement's. The window is
made small here so that every case is met on a small store.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import apsw
import pytest

from memory_adapters.sql_claims.lexical import LexicalQuery
from memory_adapters.sqlite_store import ApswClaimStore
from memory_adapters.sqlite_store.fts import search as fts
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter

A = "agent-a"
WORDS = ("tea", "green", "garden", "kettle", "oolong", "harbour", "lantern")
EVERYTHING = ScopeFilter.from_context(ScopeContext(session_id="s1"))
AGENT_ONLY = ScopeFilter.from_context(ScopeContext(session_id="other"))


def _seed(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> list[str]:
    """Texts of a few words, many of them identical (equal bm25), some in session scope,
    some archived (matched by the index, refused by the predicates), importances in steps."""
    rng = random.Random(7)
    ids = []
    for i in range(160):
        words = rng.sample(WORDS, k=rng.choice((1, 2, 3)))
        clock.advance(1)
        outcome = store.insert(
            make_draft(
                " ".join(words) + ("" if i % 3 else " again"),
                importance=rng.choice((0.2, 0.5, 0.5, 0.9)),
                scope=Scope.session("s1") if i % 5 == 0 else Scope.agent(),
            ),
            origin=WriteOrigin.EXTRACTION,
            now=clock.now(),
        )
        assert outcome.claim is not None
        ids.append(outcome.claim.id)
    for claim_id in ids[::4]:
        clock.advance(1)
        store.archive(A, claim_id, now=clock.now())
    return ids


@pytest.mark.parametrize("factor", [1, 2, 4, 50])
@pytest.mark.parametrize("limit", [1, 5, 24])
@pytest.mark.parametrize("scope_filter", [EVERYTHING, AGENT_ONLY], ids=["session", "agent"])
@pytest.mark.parametrize(
    "terms", [("tea",), ("garden", "kettle"), ("oolong", "lantern", "again"), ("zebra",)]
)
def test_the_window_answers_what_the_full_statement_answers(  # noqa: PLR0917
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    monkeypatch: pytest.MonkeyPatch,
    factor: int,
    limit: int,
    scope_filter: ScopeFilter,
    terms: tuple[str, ...],
) -> None:
    """R-READ-3: same hits, order and scores as every match joined, whatever the window."""
    _seed(store, clock, make_draft)
    monkeypatch.setattr(fts, "_RANK_WINDOW_FACTOR", factor)
    query = LexicalQuery(
        agent_id=A,
        long_terms=terms,
        short_terms=(),
        scope_filter=scope_filter,
        limit=limit,
        all_terms=False,
    )
    with store._read() as session:
        full = fts._ranked_fully(session, query)
        windowed = fts._ranked(session, query)
    assert [(hit.claim_id, hit.rank) for hit in windowed] == [
        (hit.claim_id, hit.rank) for hit in full
    ]
    # A hit the window answered carries its authoritative row, as re-validation reads it;
    # the full statement's hits carry none (re-validation reads them). A window wide enough
    # for every match always answers.
    applicable = {
        claim.id: claim
        for claim in store.list_applicable_by_ids(
            A, [hit.claim_id for hit in windowed], scope_filter=scope_filter
        )
    }
    assert all(hit.claim in (None, applicable[hit.claim_id]) for hit in windowed)
    assert all(hit.claim is None for hit in full)
    if factor * limit > 160:
        assert all(hit.claim is not None for hit in windowed)


def test_a_wrongly_typed_value_falls_back_to_the_full_statement(
    store: ApswClaimStore,
    clock: ManualClock,
    make_draft: Callable[..., ClaimDraft],
    raw: apsw.Connection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R-TIME-4: a raw writer's text importance cannot be ordered in Python; SQL orders it,
    and the search still answers (re-validation skips the row later)."""
    _seed(store, clock, make_draft)
    monkeypatch.setattr(fts, "_RANK_WINDOW_FACTOR", 50)
    query = LexicalQuery(
        agent_id=A,
        long_terms=WORDS,
        short_terms=(),
        scope_filter=EVERYTHING,
        limit=200,
        all_terms=False,
    )
    with store._read() as session:
        corrupted = fts._ranked_fully(session, query)[0].claim_id
    raw.execute("PRAGMA ignore_check_constraints = ON")  # a writer past the schema's checks
    raw.execute("UPDATE agent_memory SET importance = 'high' WHERE id = ?", (corrupted,))
    with store._read() as session:
        windowed = fts._ranked(session, query)
        full = fts._ranked_fully(session, query)
    assert windowed == full
    assert corrupted in {hit.claim_id for hit in windowed}
