"""The VectorStore contract suite: what every vector store plugin must do (R-VEC-1..4, R-PROV-4).

Subclass `VectorStoreContract` in a test module and override the `open_vector_store`
fixture with one returning a zero-argument callable; each call opens a store over the same
persistent state (the same directory, the same backing dict), so a second call is a reopen.
A store that keeps nothing across a reopen declares `capabilities` without "persistence"
(with `memory_contracts.pytest_plugin` loaded, the reopen test is then deselected with that
reason; without it, the test skips):

    class TestMyStore(VectorStoreContract):
        @pytest.fixture
        def open_vector_store(self, tmp_path):
            return lambda: MyVectorStore(tmp_path)

The tests drive the port with a `ManualClock`, so no test waits for time to pass.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import pytest

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import (
    DeadlineExceeded,
    IdentityMismatch,
    OperationCancelled,
    StoreError,
    ValidationError,
)
from memory_core.ports.vectors import ReadyCertificate, VectorStore, VectorStoreCold

from .fakes import ManualClock
from .pytest_plugin import require_declared, requires_capability

__all__ = ["IDENTITY", "VectorStoreContract"]

IDENTITY = EmbeddingIdentity(provider="contract", model="model-a", dim=4)
OTHER_MODEL = EmbeddingIdentity(provider="contract", model="model-b", dim=4)
OTHER_DIM = EmbeddingIdentity(provider="contract", model="model-a", dim=3)

Opener = Callable[[], VectorStore]


def _run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


class VectorStoreContract:
    """The suite. Override `open_vector_store`; leave the tests alone."""

    #: What the store can do; "persistence": data survives a close and a reopen.
    capabilities: ClassVar[frozenset[str]] = frozenset({"persistence"})

    @pytest.fixture
    def open_vector_store(self) -> Opener:
        raise NotImplementedError("override the open_vector_store fixture")

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock()

    # --- helpers ----------------------------------------------------------------------

    @staticmethod
    def calls(clock: ManualClock) -> dict[str, Any]:
        """Keyword arguments for a call with a generous deadline and a fresh token."""
        return {"deadline": Deadline.after(clock, 60.0), "cancel": CancellationToken()}

    async def warmed(
        self, store: VectorStore, clock: ManualClock, agent: str, vectors: dict[str, list[float]]
    ) -> ReadyCertificate:
        await store.upsert(agent, IDENTITY, vectors, **self.calls(clock))
        report = await store.warm(
            agent, IDENTITY, list(vectors), config_generation=1, **self.calls(clock)
        )
        return report.certificate

    # --- round trip and ordering ------------------------------------------------------

    def test_upserted_vectors_are_found_by_cosine_similarity(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: exact cosine search returns the stored ids with their similarity."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(
                    store,
                    clock,
                    "agent-1",
                    {"north": [0, 1, 0, 0], "east": [1, 0, 0, 0], "north-east": [1, 1, 0, 0]},
                )
                hits = await store.query("agent-1", cert, [0, 2, 0, 0], 3, **self.calls(clock))
                assert [hit.claim_id for hit in hits] == ["north", "north-east", "east"]
                assert [hit.similarity for hit in hits] == pytest.approx(
                    [1.0, math.sqrt(0.5), 0.0], abs=1e-6
                )
            finally:
                await store.aclose()

        _run(scenario)

    def test_query_orders_ties_by_claim_id_and_honours_top_k(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-READ-8: equal similarities are ordered by claim id ascending; top_k cuts after."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                same = [0.5, 0.5, 0.5, 0.5]
                cert = await self.warmed(
                    store,
                    clock,
                    "agent-1",
                    {"c": same, "a": same, "d": [0, 0, 0, 1], "b": same, "e": [-1, 0, 0, 0]},
                )
                hits = await store.query("agent-1", cert, same, 3, **self.calls(clock))
                assert [hit.claim_id for hit in hits] == ["a", "b", "c"]
                everything = await store.query("agent-1", cert, same, 50, **self.calls(clock))
                assert [hit.claim_id for hit in everything] == ["a", "b", "c", "d", "e"]
                assert await store.query("agent-1", cert, same, 0, **self.calls(clock)) == []
                with pytest.raises(ValidationError):
                    await store.query("agent-1", cert, same, -1, **self.calls(clock))
            finally:
                await store.aclose()

        _run(scenario)

    def test_query_batch_matches_single_queries(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: several query vectors in one call, one answer each, in input order."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                vectors = {f"v{i}": [1.0, float(i), float(i % 3), 0.5] for i in range(12)}
                cert = await self.warmed(store, clock, "agent-1", vectors)
                queries = [[1, 0, 0, 0], [0, 1, 1, 0], [0.2, 5, 0, 1]]
                batch = await store.query_batch("agent-1", cert, queries, 4, **self.calls(clock))
                assert len(batch) == len(queries)
                for query, answer in zip(queries, batch, strict=True):
                    single = await store.query("agent-1", cert, query, 4, **self.calls(clock))
                    assert [hit.claim_id for hit in answer] == [hit.claim_id for hit in single]
            finally:
                await store.aclose()

        _run(scenario)

    def test_query_by_id_returns_neighbours_without_itself(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: neighbour search from a stored vector excludes that vector."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(
                    store,
                    clock,
                    "agent-1",
                    {"x": [1, 0, 0, 0], "near": [1, 0.1, 0, 0], "far": [0, 0, 1, 0]},
                )
                hits = await store.query_by_id("agent-1", cert, "x", 5, **self.calls(clock))
                assert [hit.claim_id for hit in hits] == ["near", "far"]
                unknown = await store.query_by_id("agent-1", cert, "nope", 5, **self.calls(clock))
                assert unknown == []
            finally:
                await store.aclose()

        _run(scenario)

    def test_upsert_replaces_the_vector_of_an_existing_id(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: upsert is insert-or-replace by claim id."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(
                    store, clock, "agent-1", {"a": [1, 0, 0, 0], "b": [0, 1, 0, 0]}
                )
                await store.upsert("agent-1", IDENTITY, {"a": [0, 0, 0, 1]}, **self.calls(clock))
                hits = await store.query("agent-1", cert, [0, 0, 0, 1], 1, **self.calls(clock))
                assert [(hit.claim_id, round(hit.similarity, 6)) for hit in hits] == [("a", 1.0)]
                assert await store.list_ids("agent-1", **self.calls(clock)) == ["a", "b"]
            finally:
                await store.aclose()

        _run(scenario)

    # --- identity ---------------------------------------------------------------------

    def test_identity_mismatch_is_refused_until_rebuild(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-PROV-4: another provider/model/dim is refused, never mixed; rebuild starts empty."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                old = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
                with pytest.raises(IdentityMismatch):
                    await store.upsert(
                        "agent-1", OTHER_MODEL, {"b": [0, 1, 0, 0]}, **self.calls(clock)
                    )
                with pytest.raises(IdentityMismatch):
                    await store.upsert("agent-1", OTHER_DIM, {"b": [0, 1, 0]}, **self.calls(clock))
                with pytest.raises(IdentityMismatch):
                    await store.warm(
                        "agent-1", OTHER_MODEL, ["a"], config_generation=2, **self.calls(clock)
                    )
                assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]
                assert await store.stored_identity("agent-1", **self.calls(clock)) == IDENTITY

                await store.rebuild("agent-1", OTHER_DIM, **self.calls(clock))
                assert await store.stored_identity("agent-1", **self.calls(clock)) == OTHER_DIM
                assert await store.list_ids("agent-1", **self.calls(clock)) == []
                with pytest.raises(VectorStoreCold):
                    await store.query("agent-1", old, [1, 0, 0, 0], 1, **self.calls(clock))
                await store.upsert("agent-1", OTHER_DIM, {"b": [0, 1, 0]}, **self.calls(clock))
                report = await store.warm(
                    "agent-1", OTHER_DIM, ["b"], config_generation=2, **self.calls(clock)
                )
                hits = await store.query(
                    "agent-1", report.certificate, [0, 1, 0], 5, **self.calls(clock)
                )
                assert [hit.claim_id for hit in hits] == ["b"]
            finally:
                await store.aclose()

        _run(scenario)

    # --- validation -------------------------------------------------------------------

    @pytest.mark.parametrize(
        "bad",
        [
            pytest.param([], id="empty"),
            pytest.param([1.0, 0.0, 0.0], id="wrong-dimension"),
            pytest.param([1.0, float("nan"), 0.0, 0.0], id="nan"),
            pytest.param([1.0, float("inf"), 0.0, 0.0], id="infinite"),
            pytest.param([0.0, 0.0, 0.0, 0.0], id="zero"),
        ],
    )
    def test_invalid_vectors_are_rejected_before_anything_is_written(
        self, open_vector_store: Opener, clock: ManualClock, bad: list[float]
    ) -> None:
        """R-VEC-1: zero-length, wrong-dimension, NaN/inf and zero vectors are refused, and a
        batch holding one writes nothing; such a query vector is refused too."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
                with pytest.raises(ValidationError):
                    await store.upsert(
                        "agent-1",
                        IDENTITY,
                        {"good": [0, 1, 0, 0], "bad": bad},
                        **self.calls(clock),
                    )
                assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]
                with pytest.raises(ValidationError):
                    await store.query("agent-1", cert, bad, 3, **self.calls(clock))
                with pytest.raises(ValidationError):
                    await store.query_batch(
                        "agent-1", cert, [[1, 0, 0, 0], bad], 3, **self.calls(clock)
                    )
            finally:
                await store.aclose()

        _run(scenario)

    # --- namespaces, persistence, delete, list ----------------------------------------

    def test_agents_never_see_each_others_vectors(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-PRIV-2: one namespace per agent; a certificate is good for its own agent only."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert_a = await self.warmed(store, clock, "agent-a", {"a1": [1, 0, 0, 0]})
                await store.upsert("agent-b", OTHER_DIM, {"b1": [1, 0, 0]}, **self.calls(clock))
                cert_b = (
                    await store.warm(
                        "agent-b", OTHER_DIM, ["b1"], config_generation=1, **self.calls(clock)
                    )
                ).certificate
                hits = await store.query("agent-a", cert_a, [1, 0, 0, 0], 5, **self.calls(clock))
                assert [hit.claim_id for hit in hits] == ["a1"]
                assert await store.list_ids("agent-b", **self.calls(clock)) == ["b1"]
                assert await store.delete("agent-b", ["a1"], **self.calls(clock)) == 0
                with pytest.raises(VectorStoreCold):
                    await store.query("agent-b", cert_a, [1, 0, 0, 0], 5, **self.calls(clock))
                with pytest.raises(VectorStoreCold):
                    await store.query("agent-a", cert_b, [1, 0, 0], 5, **self.calls(clock))
                await store.drop_agent("agent-b", **self.calls(clock))
                assert await store.list_ids("agent-a", **self.calls(clock)) == ["a1"]
            finally:
                await store.aclose()

        _run(scenario)

    @requires_capability("persistence")
    def test_vectors_survive_close_and_reopen_but_certificates_do_not(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: stored vectors persist; a reopened store is cold until warmed again."""
        require_declared(self, "persistence")

        async def scenario() -> None:
            store = open_vector_store()
            cert = await self.warmed(
                store, clock, "agent-1", {"a": [1, 0, 0, 0], "b": [0, 1, 0, 0]}
            )
            await store.aclose()
            reopened = open_vector_store()
            try:
                assert await reopened.list_ids("agent-1", **self.calls(clock)) == ["a", "b"]
                assert await reopened.stored_identity("agent-1", **self.calls(clock)) == IDENTITY
                with pytest.raises(VectorStoreCold):
                    await reopened.query("agent-1", cert, [1, 0, 0, 0], 1, **self.calls(clock))
                report = await reopened.warm(
                    "agent-1", IDENTITY, ["a", "b"], config_generation=1, **self.calls(clock)
                )
                hits = await reopened.query(
                    "agent-1", report.certificate, [0, 1, 0, 0], 1, **self.calls(clock)
                )
                assert [hit.claim_id for hit in hits] == ["b"]
            finally:
                await reopened.aclose()

        _run(scenario)

    def test_delete_counts_removed_ids_and_ignores_unknown_ones(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-FORGET-1: vector delete by id; unknown ids are not an error."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(
                    store,
                    clock,
                    "agent-1",
                    {"a": [1, 0, 0, 0], "b": [0, 1, 0, 0], "c": [0, 0, 1, 0]},
                )
                assert await store.delete("agent-1", ["b", "zz", "b"], **self.calls(clock)) == 1
                assert await store.delete("agent-1", [], **self.calls(clock)) == 0
                assert await store.list_ids("agent-1", **self.calls(clock)) == ["a", "c"]
                hits = await store.query("agent-1", cert, [0, 1, 0, 0], 5, **self.calls(clock))
                assert "b" not in [hit.claim_id for hit in hits]
                assert await store.delete("never-seen", ["a"], **self.calls(clock)) == 0
            finally:
                await store.aclose()

        _run(scenario)

    def test_list_ids_is_ascending_and_empty_for_an_unknown_agent(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: the coverage listing is complete and ordered."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                ids = ["m", "b", "z", "a", "k"]
                await store.upsert(
                    "agent-1",
                    IDENTITY,
                    {claim_id: [1, i, 0, 0] for i, claim_id in enumerate(ids)},
                    **self.calls(clock),
                )
                assert await store.list_ids("agent-1", **self.calls(clock)) == sorted(ids)
                assert await store.list_ids("nobody", **self.calls(clock)) == []
                assert await store.stored_identity("nobody", **self.calls(clock)) is None
            finally:
                await store.aclose()

        _run(scenario)

    def test_drop_agent_removes_the_namespace_and_is_idempotent(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-FORGET-4: retirement deletes the whole namespace; its certificate lapses."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
                await store.drop_agent("agent-1", **self.calls(clock))
                await store.drop_agent("agent-1", **self.calls(clock))
                assert await store.list_ids("agent-1", **self.calls(clock)) == []
                assert await store.stored_identity("agent-1", **self.calls(clock)) is None
                with pytest.raises(VectorStoreCold):
                    await store.query("agent-1", cert, [1, 0, 0, 0], 1, **self.calls(clock))
            finally:
                await store.aclose()

        _run(scenario)

    # --- certificates -----------------------------------------------------------------

    def test_warm_up_deletes_orphans_and_reports_missing_vectors(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: vectors without a ready claim (e.g. of cleared claims) are deleted at the
        coverage check and never recalled; ready claims without a vector are reported."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                await store.upsert(
                    "agent-1",
                    IDENTITY,
                    {"kept": [1, 0, 0, 0], "cleared-1": [1, 0.1, 0, 0], "cleared-2": [0, 1, 0, 0]},
                    **self.calls(clock),
                )
                report = await store.warm(
                    "agent-1",
                    IDENTITY,
                    ["kept", "needs-embedding"],
                    config_generation=7,
                    **self.calls(clock),
                )
                assert report.orphans_deleted == 2
                assert report.missing_ids == ("needs-embedding",)
                assert report.vector_count == 1
                assert report.certificate.agent_id == "agent-1"
                assert report.certificate.identity == IDENTITY
                assert report.certificate.config_generation == 7
                assert await store.list_ids("agent-1", **self.calls(clock)) == ["kept"]
                hits = await store.query(
                    "agent-1", report.certificate, [1, 0.1, 0, 0], 5, **self.calls(clock)
                )
                assert [hit.claim_id for hit in hits] == ["kept"]
            finally:
                await store.aclose()

        _run(scenario)

    def test_queries_need_the_current_certificate(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: never warmed, superseded by a later warm-up, or forged ⇒ VectorStoreCold."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                await store.upsert("agent-1", IDENTITY, {"a": [1, 0, 0, 0]}, **self.calls(clock))
                forged = ReadyCertificate(
                    agent_id="agent-1", identity=IDENTITY, store_generation=1, config_generation=1
                )
                with pytest.raises(VectorStoreCold):
                    await store.query("agent-1", forged, [1, 0, 0, 0], 1, **self.calls(clock))
                first = await store.warm(
                    "agent-1", IDENTITY, ["a"], config_generation=1, **self.calls(clock)
                )
                second = await store.warm(
                    "agent-1", IDENTITY, ["a"], config_generation=2, **self.calls(clock)
                )
                with pytest.raises(VectorStoreCold):
                    await store.query(
                        "agent-1", first.certificate, [1, 0, 0, 0], 1, **self.calls(clock)
                    )
                with pytest.raises(VectorStoreCold):
                    await store.query_by_id(
                        "agent-1", first.certificate, "a", 1, **self.calls(clock)
                    )
                hits = await store.query(
                    "agent-1", second.certificate, [1, 0, 0, 0], 1, **self.calls(clock)
                )
                assert [hit.claim_id for hit in hits] == ["a"]
            finally:
                await store.aclose()

        _run(scenario)

    # --- deadlines, cancellation, closing ---------------------------------------------

    def test_an_expired_deadline_raises_before_any_work(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-3, R-ARCH-2: every waiting method honours its deadline."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
                expired = Deadline.after(clock, 0.0)
                calls = {"deadline": expired, "cancel": CancellationToken()}
                for attempt in _every_call(store, cert, calls):
                    with pytest.raises(DeadlineExceeded):
                        await attempt()
                assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]
                assert await store.stored_identity("agent-1", **self.calls(clock)) == IDENTITY
            finally:
                await store.aclose()

        _run(scenario)

    def test_a_cancelled_token_raises_before_any_work(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-PROV-3: cancellation reaches every vector store call."""

        async def scenario() -> None:
            store = open_vector_store()
            try:
                cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
                token = CancellationToken()
                token.cancel("turn abandoned")
                calls = {"deadline": Deadline.after(clock, 60.0), "cancel": token}
                for attempt in _every_call(store, cert, calls):
                    with pytest.raises(OperationCancelled):
                        await attempt()
                assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]
            finally:
                await store.aclose()

        _run(scenario)

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

        _run(scenario)


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
