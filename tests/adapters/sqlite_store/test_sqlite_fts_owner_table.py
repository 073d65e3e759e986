"""The FTS search reads the owner's table only (R-READ-3, R-FORGET-3): an agent with nothing
indexed yet searches to nothing, and the search never looks its table up in the schema —
sqlite_master has no index by name, so a lookup there grew with every other agent's tables."""

from __future__ import annotations

from collections.abc import Callable

import apsw
import pytest

from memory_adapters.sqlite_store import ApswClaimStore
from memory_adapters.sqlite_store.fts import search as fts
from memory_adapters.sqlite_store.fts.mirror import owner_table
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.errors import StoreError
from memory_core.domain.scope import ScopeContext, ScopeFilter
from memory_core.ports.claims import MatchMode

EVERYTHING = ScopeFilter.from_context(ScopeContext(session_id="s1"))


def _search(store: ApswClaimStore, agent_id: str, terms: list[str]) -> list[str]:
    hits = store.search_fts(
        agent_id, terms, scope_filter=EVERYTHING, limit=10, match_mode=MatchMode.ANY
    )
    return [hit.claim_id for hit in hits]


@pytest.fixture
def seeded(
    store: ApswClaimStore, clock: ManualClock, make_draft: Callable[..., ClaimDraft]
) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for agent in ("agent-a", "agent-b", "agent-c"):
        for text in ("the kettle is green", "the lantern by the harbour"):
            clock.advance(1)
            outcome = store.insert(
                make_draft(text, agent_id=agent), origin=WriteOrigin.EXTRACTION, now=clock.now()
            )
            ids.setdefault(agent, []).append(outcome.claim.id)
    return ids


def test_an_agent_with_nothing_indexed_searches_to_nothing(
    store: ApswClaimStore, seeded: dict[str, list[str]]
) -> None:
    assert _search(store, "agent-z", ["kettle", "harbour"]) == []
    assert _search(store, "agent-a", ["kettle"]) == [seeded["agent-a"][0]]


def test_the_search_does_not_scan_the_schema_for_the_owners_table(
    store: ApswClaimStore, seeded: dict[str, list[str]]
) -> None:
    statements: list[str] = []

    def trace(_cursor: apsw.Cursor, sql: str, _bindings: object) -> bool:
        statements.append(sql)
        return True

    store._conn.exec_trace = trace  # the store's one connection
    try:
        assert set(_search(store, "agent-b", ["lantern", "kettle"])) == set(seeded["agent-b"])
        assert _search(store, "agent-z", ["lantern"]) == []
    finally:
        store._conn.exec_trace = None
    assert statements
    assert not [sql for sql in statements if "sqlite_master" in sql]


@pytest.mark.parametrize(
    "missing",
    ["agent_memory_meta", owner_table("agent-a") + "_vocab", owner_table("agent-b")],
)
def test_another_missing_table_is_an_error_not_an_empty_index(
    store: ApswClaimStore,
    seeded: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    missing: str,
) -> None:
    """Only the owner's own table missing means nothing indexed; its vocabulary missing,
    or any other table, is a fault the caller hears of."""

    def broken(*_args: object, **_kwargs: object) -> list[object]:
        raise apsw.SQLError(f"SQLError: no such table: {missing}")

    monkeypatch.setattr(fts, "_search", broken)
    with pytest.raises(StoreError):
        _search(store, "agent-a", ["kettle"])
