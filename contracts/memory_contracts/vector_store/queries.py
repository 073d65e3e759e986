"""Cases on queries: cosine order, ties, top-k, batches, neighbours by id, upsert."""

from __future__ import annotations

import math

import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.errors import ValidationError
from memory_core.ports.vectors import VectorStore

from .support import IDENTITY, Opener, VectorStoreCases, with_store

__all__ = ["QueryCases"]


class QueryCases(VectorStoreCases):
    # --- round trip and ordering ------------------------------------------------------

    def test_upserted_vectors_are_found_by_cosine_similarity(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: exact cosine search returns the stored ids with their similarity."""

        async def scenario(store: VectorStore) -> None:
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

        with_store(open_vector_store, scenario)

    def test_query_orders_ties_by_claim_id_and_honours_top_k(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-READ-8: equal similarities are ordered by claim id ascending; top_k cuts after."""

        async def scenario(store: VectorStore) -> None:
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

        with_store(open_vector_store, scenario)

    def test_query_batch_matches_single_queries(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: several query vectors in one call, one answer each, in input order."""

        async def scenario(store: VectorStore) -> None:
            vectors = {f"v{i}": [1.0, float(i), float(i % 3), 0.5] for i in range(12)}
            cert = await self.warmed(store, clock, "agent-1", vectors)
            queries = [[1, 0, 0, 0], [0, 1, 1, 0], [0.2, 5, 0, 1]]
            batch = await store.query_batch("agent-1", cert, queries, 4, **self.calls(clock))
            assert len(batch) == len(queries)
            for query, answer in zip(queries, batch, strict=True):
                single = await store.query("agent-1", cert, query, 4, **self.calls(clock))
                assert [hit.claim_id for hit in answer] == [hit.claim_id for hit in single]

        with_store(open_vector_store, scenario)

    def test_query_by_id_returns_neighbours_without_itself(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: neighbour search from a stored vector excludes that vector."""

        async def scenario(store: VectorStore) -> None:
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

        with_store(open_vector_store, scenario)

    def test_upsert_replaces_the_vector_of_an_existing_id(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-1: upsert is insert-or-replace by claim id."""

        async def scenario(store: VectorStore) -> None:
            cert = await self.warmed(
                store, clock, "agent-1", {"a": [1, 0, 0, 0], "b": [0, 1, 0, 0]}
            )
            await store.upsert("agent-1", IDENTITY, {"a": [0, 0, 0, 1]}, **self.calls(clock))
            hits = await store.query("agent-1", cert, [0, 0, 0, 1], 1, **self.calls(clock))
            assert [(hit.claim_id, round(hit.similarity, 6)) for hit in hits] == [("a", 1.0)]
            assert await store.list_ids("agent-1", **self.calls(clock)) == ["a", "b"]

        with_store(open_vector_store, scenario)
