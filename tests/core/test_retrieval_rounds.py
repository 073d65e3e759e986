"""One retrieval round's store reads (R-READ-3): the FTS hits and the vector hits are
re-validated against their authoritative rows in one read, and a vector hit counts only
while its row is ready in the identity the namespace was certified with — the same row
still counts as an FTS hit, which no embedding state bears on."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Claim, ClaimDraft, EmbeddingIdentity, WriteOrigin
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import FtsHit, MatchMode
from memory_core.services.read.retrieval.rounds import Round, read_round

A = "agent-a"
CERTIFIED = EmbeddingIdentity(provider="p", model="m-v2", dim=4)
OLDER = EmbeddingIdentity(provider="p", model="m-v1", dim=4)
CLOCK = ManualClock()
Store = InMemoryClaimStore | ApswClaimStore


def _sqlite(tmp_path: Path) -> Iterator[ApswClaimStore]:
    sqlite = ApswClaimStore(
        tmp_path / "memory.sqlite3",
        secret_policy=PatternSecretPolicy(mode="reject"),
        clock=CLOCK,
        synchronous="NORMAL",
    )
    yield sqlite
    sqlite.close()


@pytest.fixture(params=["fake", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "fake":
        yield InMemoryClaimStore(clock=CLOCK)
    else:
        yield from _sqlite(tmp_path)


def _claim(store: Store, content: str, identity: EmbeddingIdentity | None) -> str:
    now = CLOCK.now()
    outcome = store.insert(
        ClaimDraft(agent_id=A, kind="semantic", content=content),
        origin=WriteOrigin.USER_ADD,
        now=now,
    )
    claim = outcome.claim
    assert claim is not None
    if identity is not None:
        assert store.mark_embedding(
            A, claim.id, expected_revision=claim.revision, identity=identity, ready=True, now=now
        )
    return claim.id


def _round(
    store: Store, terms: tuple[str, ...], vector_ids: list[str], identity: EmbeddingIdentity | None
) -> Round:
    return read_round(
        store,
        CLOCK,
        A,
        terms,
        scope_filter=ScopeFilter.from_context(None),
        fts_limit=10,
        match_mode=MatchMode.ANY,
        vector_ids=vector_ids,
        identity=identity,
    )


def test_a_vector_hit_counts_only_while_ready_in_the_certified_identity(store: Store) -> None:
    current = _claim(store, "the boat is moored in Porto", CERTIFIED)
    stale = _claim(store, "the kayak is stored in Porto", OLDER)
    pending = _claim(store, "the canoe is borrowed from Ana", None)
    found = _round(store, ("kayak",), [current, stale, pending], CERTIFIED)
    assert [claim.id for claim in found.vector_claims] == [current]
    # The stale row is still a lexical hit: FTS does not depend on any vector.
    assert [claim.id for claim in found.fts_claims] == [stale]
    assert [hit.claim_id for hit in found.fts_hits] == [stale]


def test_a_hit_of_both_kinds_is_one_row_in_both_lists(store: Store) -> None:
    both = _claim(store, "the kayak is moored in Porto", CERTIFIED)
    found = _round(store, ("kayak",), [both], CERTIFIED)
    assert [claim.id for claim in found.fts_claims] == [both]
    assert [claim.id for claim in found.vector_claims] == [both]
    assert found.fts_claims[0] is found.vector_claims[0]


def test_without_a_certificate_no_vector_hit_is_read(store: Store) -> None:
    ready = _claim(store, "the boat is moored in Porto", CERTIFIED)
    found = _round(store, (), [ready], None)
    assert found.vector_claims == [] and found.fts_claims == []


class _Carrying:
    """The SQLite store, its FTS hits carrying `carried` instead of their rows, and the ids
    every re-validation asked for."""

    def __init__(self, store: ApswClaimStore, carried: Callable[[FtsHit], Claim | None]):
        self._store = store
        self._carried = carried
        self.asked: list[list[str]] = []

    def search_fts(self, *args: Any, **kwargs: Any) -> list[FtsHit]:
        return [
            attrs.evolve(hit, claim=self._carried(hit))
            for hit in self._store.search_fts(*args, **kwargs)
        ]

    def list_applicable_by_ids(self, agent_id: str, claim_ids: Any, **kwargs: Any) -> Any:
        self.asked.append(list(claim_ids))
        return self._store.list_applicable_by_ids(agent_id, claim_ids, **kwargs)


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[ApswClaimStore]:
    yield from _sqlite(tmp_path)


def test_a_hit_that_carries_its_row_is_not_read_again(sqlite: ApswClaimStore) -> None:
    """R-READ-3: the search read the row under re-validation's predicates; only the vector
    hit it did not return is re-validated."""
    lexical = _claim(sqlite, "the kayak is moored in Porto", CERTIFIED)
    semantic = _claim(sqlite, "the boat is moored in Lyon", CERTIFIED)
    spy = _Carrying(sqlite, lambda hit: hit.claim)
    found = _round(spy, ("kayak",), [lexical, semantic], CERTIFIED)  # type: ignore[arg-type]
    assert spy.asked == [[semantic]]
    assert [claim.id for claim in found.fts_claims] == [lexical]
    assert [claim.id for claim in found.vector_claims] == [lexical, semantic]


@pytest.mark.parametrize("foreign", ["another claim", "another agent"])
def test_a_carried_row_that_is_not_the_hits_own_is_read_again(
    sqlite: ApswClaimStore, foreign: str
) -> None:
    """A plugin's slip cannot put another claim, or another agent's, in the turn: such a
    hit is re-validated from the store like one that carries nothing (R-STORE-3)."""
    hit_id = _claim(sqlite, "the kayak is moored in Porto", None)
    other = sqlite.get(A, _claim(sqlite, "the boat is moored in Lyon", None))
    wrong = other if foreign == "another claim" else attrs.evolve(other, id=hit_id, agent_id="b")
    spy = _Carrying(sqlite, lambda hit: wrong)
    found = _round(spy, ("kayak",), [], None)  # type: ignore[arg-type]
    assert spy.asked == [[hit_id]]
    assert found.fts_claims == [sqlite.get(A, hit_id)]
