"""One retrieval round's store reads (R-READ-3): the FTS hits and the vector hits are
re-validated against their authoritative rows in one read, and a vector hit counts only
while its row is ready in the identity the namespace was certified with — the same row
still counts as an FTS hit, which no embedding state bears on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, EmbeddingIdentity, WriteOrigin
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import MatchMode
from memory_core.services.read.retrieval.rounds import Round, read_round

A = "agent-a"
CERTIFIED = EmbeddingIdentity(provider="p", model="m-v2", dim=4)
OLDER = EmbeddingIdentity(provider="p", model="m-v1", dim=4)
CLOCK = ManualClock()
Store = InMemoryClaimStore | ApswClaimStore


@pytest.fixture(params=["fake", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "fake":
        yield InMemoryClaimStore(clock=CLOCK)
        return
    sqlite = ApswClaimStore(
        tmp_path / "memory.sqlite3",
        secret_policy=PatternSecretPolicy(mode="reject"),
        clock=CLOCK,
        synchronous="NORMAL",
    )
    yield sqlite
    sqlite.close()


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
