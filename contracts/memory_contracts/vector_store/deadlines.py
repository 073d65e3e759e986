"""Cases on deadlines, cancellation and a closed store."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled, StoreError
from memory_core.ports.vectors import ReadyCertificate, VectorStore

from .support import IDENTITY, OTHER_MODEL, Opener, VectorStoreCases, run, with_store

__all__ = ["DeadlineCases"]


class DeadlineCases(VectorStoreCases):
    # --- deadlines, cancellation, closing ---------------------------------------------

    def test_an_expired_deadline_raises_before_any_work(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-3, R-ARCH-2: every waiting method honours its deadline."""

        async def scenario(store: VectorStore) -> None:
            cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
            expired = Deadline.after(clock, 0.0)
            calls = {"deadline": expired, "cancel": CancellationToken()}
            for attempt in _every_call(store, cert, calls):
                with pytest.raises(DeadlineExceeded):
                    await attempt()
            assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]
            assert await store.stored_identity("agent-1", **self.calls(clock)) == IDENTITY

        with_store(open_vector_store, scenario)

    def test_a_cancelled_token_raises_before_any_work(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-PROV-3: cancellation reaches every vector store call."""

        async def scenario(store: VectorStore) -> None:
            cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
            token = CancellationToken()
            token.cancel("turn abandoned")
            calls = {"deadline": Deadline.after(clock, 60.0), "cancel": token}
            for attempt in _every_call(store, cert, calls):
                with pytest.raises(OperationCancelled):
                    await attempt()
            assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]

        with_store(open_vector_store, scenario)

    def test_a_closed_store_refuses_calls(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-3: after aclose every call fails typed; closing twice is harmless."""

        async def scenario() -> None:
            store = open_vector_store()
            await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
            await store.aclose()
            await store.aclose()
            assert store.health("agent-1").value == "stopped"
            with pytest.raises(StoreError):
                await store.list_ids("agent-1", **self.calls(clock))
            with pytest.raises(StoreError):
                await store.upsert("agent-1", IDENTITY, {"b": [0, 1, 0, 0]}, **self.calls(clock))

        run(scenario)


def _every_call(
    store: VectorStore, cert: ReadyCertificate, calls: dict[str, Any]
) -> list[Callable[[], Awaitable[object]]]:
    vector = [0.0, 1.0, 0.0, 0.0]
    return [
        lambda: store.upsert("agent-1", IDENTITY, {"b": vector}, **calls),
        lambda: store.warm("agent-1", IDENTITY, ["a"], config_generation=1, **calls),
        lambda: store.delete("agent-1", ["a"], **calls),
        lambda: store.query("agent-1", cert, vector, 1, **calls),
        lambda: store.query_batch("agent-1", cert, [vector], 1, **calls),
        lambda: store.query_by_id("agent-1", cert, "a", 1, **calls),
        lambda: store.list_ids("agent-1", **calls),
        lambda: store.stored_identity("agent-1", **calls),
        lambda: store.rebuild("agent-1", OTHER_MODEL, **calls),
        lambda: store.drop_agent("agent-1", **calls),
    ]
