"""Every claim-store call of the read path goes through the `BlockingCalls` runner, and a
store call that runs out of time fails open as `storeTimeout` (R-READ-1, R-HOST-1)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from memory_adapters.offload import InlineCalls
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, ClaimKind, WriteOrigin
from memory_core.domain.errors import DeadlineExceeded
from memory_core.domain.manifest import Degradation
from memory_core.domain.scope import Scope
from memory_core.services.read.retrieval.service import (
    RetrievalOutcome,
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalService,
)
from memory_core.services.read.runtime import ContributionOutcome, MemoryRuntime
from memory_core.services.write.ingestion.types import SessionKind
from memory_core.settings import MemorySettings

T = TypeVar("T")
A = "agent-a"
FACT = "The user's dentist is Dr. Okafor."
# Session-scoped: recalled into the turn (and counted), not part of the agent-wide working
# projection, so the turn's access accounting has an id to count.
SESSION_FACT = "In this chat the user asked about their dentist's opening hours."
QUESTION = "Who is my dentist?"


class RecordingCalls:
    """The inline runner, noting whether a store call is being made through it."""

    def __init__(self) -> None:
        self.inside = False
        self.hops = 0
        self._inline = InlineCalls()

    async def run(
        self, call: Callable[[], T], *, deadline: Deadline, cancel: CancellationToken
    ) -> T:
        self.hops += 1

        def marked() -> T:
            self.inside = True
            try:
                return call()
            finally:
                self.inside = False

        return await self._inline.run(marked, deadline=deadline, cancel=cancel)

    def close(self) -> None:
        self._inline.close()


class WatchedStore:
    """The fake store; every method asserts it runs inside the runner, and one chosen
    method can be made to time out the way the threaded runner reports it."""

    def __init__(self, store: InMemoryClaimStore, calls: RecordingCalls) -> None:
        self._store = store
        self._calls = calls
        self.seen: list[str] = []
        self.times_out: str | None = None

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)

        def watched(*args: object, **kwargs: object) -> object:
            assert self._calls.inside, f"{name} called on the event loop, not through the runner"
            self.seen.append(name)
            if name == self.times_out:
                raise DeadlineExceeded("store call exceeded its deadline")
            return method(*args, **kwargs)

        return watched


class Read:
    def __init__(self) -> None:
        self.clock = ManualClock()
        self.settings = MemorySettings()
        self.calls = RecordingCalls()
        fake = InMemoryClaimStore(clock=self.clock)
        for content, scope in ((FACT, Scope.agent()), (SESSION_FACT, Scope.session("s1"))):
            outcome = fake.insert(
                ClaimDraft(agent_id=A, kind=ClaimKind.SEMANTIC, content=content, scope=scope),
                origin=WriteOrigin.USER_ADD,
                now=self.clock.now(),
            )
            assert outcome.claim is not None
        self.store = WatchedStore(fake, self.calls)
        self.retrieval = RetrievalService(
            store=self.store,  # type: ignore[arg-type]
            domain_clock=self.clock,
            infra_clock=self.clock,
            calls=self.calls,
            settings=self.settings,
        )
        self.runtime = MemoryRuntime(
            agent_id=A,
            session_id="s1",
            kind=SessionKind.MAIN,
            store=self.store,  # type: ignore[arg-type]
            retrieval=self.retrieval,
            anchors=None,
            domain_clock=self.clock,
            infra_clock=self.clock,
            calls=self.calls,
            settings=self.settings,
        )

    def recall(self):  # type: ignore[no-untyped-def]
        request = RetrievalRequest(agent_id=A, query=QUESTION, purpose=RetrievalPurpose.RECALL)
        deadline = Deadline.after(self.clock, 4.0)
        return asyncio.run(
            self.retrieval.retrieve(request, deadline=deadline, cancel=CancellationToken())
        )

    def turn(self, message: str = "m1"):  # type: ignore[no-untyped-def]
        return asyncio.run(self.runtime.prepare_turn(message, QUESTION))


def test_every_store_call_of_recall_and_of_a_turn_goes_through_the_runner() -> None:
    read = Read()
    assert read.recall().diagnostics.outcome is RetrievalOutcome.COMPLETED
    turn = read.turn()
    assert FACT in (turn.text or "") and SESSION_FACT in (turn.text or "")
    assert {
        "pending_clears",
        "list_directives",
        "search_fts",
        "list_applicable_by_ids",
        "list_claims",
        "record_access",
    } <= set(read.store.seen)


def test_a_recall_reads_the_store_in_one_hop_per_round() -> None:
    """R-READ-1: the fence and directives in one hop, the search and both re-validations of
    the one round in another, the access count in a third — each hop is a loop turn (or a
    thread round trip) the turn waits for."""
    read = Read()
    result = read.recall()
    assert result.diagnostics.outcome is RetrievalOutcome.COMPLETED
    assert result.diagnostics.refills == 0
    assert read.calls.hops == 3
    assert read.store.seen == [
        "pending_clears",
        "list_directives",
        "search_fts",
        "list_applicable_by_ids",
        "record_access",
    ]


def test_a_turn_reads_the_directives_once_for_its_lanes_and_its_suppression() -> None:
    """R-READ-1, R-DIR-2: the turn's own hop reads the active directives, and retrieval's
    suppression uses them rather than reading them a second time."""
    read = Read()
    turn = read.turn()
    assert FACT in (turn.text or "")
    assert read.store.seen.count("list_directives") == 1
    assert read.store.seen.index("list_directives") < read.store.seen.index("search_fts")


def test_a_turn_reads_the_fence_in_its_own_hop_and_retrieval_makes_none_for_it() -> None:
    """R-READ-1, R-FORGET-3: whether a clear fences the agent is read once, beside the
    directives in the turn's first hop; retrieval's next hop is its round's search."""
    read = Read()
    read.turn()
    seen = read.store.seen
    assert seen.count("pending_clears") == 1
    assert seen.index("pending_clears") < seen.index("search_fts")
    first_hop = set(seen[: seen.index("search_fts")])
    assert {"pending_clears", "list_directives"} <= first_hop
    # The turn's reads, the round, the working projection's source, the access count.
    assert read.calls.hops == 4


@pytest.mark.parametrize(
    "method", ["pending_clears", "list_directives", "search_fts", "list_applicable_by_ids"]
)
def test_a_retrieval_store_call_past_its_deadline_fails_open_as_a_store_timeout(
    method: str,
) -> None:
    read = Read()
    read.store.times_out = method
    result = read.recall()
    assert result.diagnostics.outcome is RetrievalOutcome.FAILED
    assert result.items == ()
    assert result.degradations == (Degradation.STORE_TIMEOUT,)


@pytest.mark.parametrize("method", ["list_directives", "list_claims"])
def test_a_turn_store_call_past_its_deadline_fails_open_and_is_not_reused(method: str) -> None:
    read = Read()
    read.store.times_out = method
    turn = read.turn()
    assert turn.outcome is ContributionOutcome.FAILED_OPEN
    assert turn.text is None
    assert Degradation.STORE_TIMEOUT in turn.manifest.degradations
    read.store.times_out = None
    retried = read.turn()  # the same message again: tried afresh, not the failure replayed
    assert retried.outcome is ContributionOutcome.ASSEMBLED
    assert FACT in (retried.text or "")


def test_access_accounting_past_the_deadline_keeps_the_contribution() -> None:
    read = Read()
    read.store.times_out = "record_access"
    turn = read.turn()
    assert turn.outcome is ContributionOutcome.ASSEMBLED
    assert SESSION_FACT in (turn.text or "")
    assert "record_access" in read.store.seen
