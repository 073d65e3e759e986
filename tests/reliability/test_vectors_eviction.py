"""Agents pushed out of the open-store cap stay vector-searchable (R-VEC-4, R-BEYOND-2).

An eviction closes an agent's file and matrix to bound memory; the next query reopens it
under the certificate it was warmed with, instead of the agent going FTS-only for good.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.ports.vectors import VectorStoreCold
from memory_plugins.eval.locomo import run_locomo
from memory_plugins.eval.locomo_format import load_locomo

SYNTHETIC = Path(__file__).parents[1] / "fixtures" / "locomo-synthetic.json"
IDENTITY = EmbeddingIdentity(provider="evict", model="m", dim=4)
AGENTS = [f"agent-{n}" for n in range(3)]


@pytest.fixture
def calls() -> Callable[[], dict[str, Any]]:
    clock = ManualClock()
    return lambda: {"deadline": Deadline.after(clock, 60), "cancel": CancellationToken()}


def unit(position: int) -> list[float]:
    return [1.0 if i == position else 0.0 for i in range(4)]


def test_an_evicted_agent_answers_under_its_certificate_with_writes_made_meanwhile(
    tmp_path: Path, calls: Callable[[], dict[str, Any]]
) -> None:
    """R-VEC-4: three agents over a cap of two; the first is evicted, written to while
    closed, evicted again, and still answers its old certificate with every vector."""

    async def scenario() -> None:
        store = DuckDBVectorStore(tmp_path, ManualClock(), max_open=2)
        try:
            certificates = {}
            for agent in AGENTS:
                await store.upsert(agent, IDENTITY, {"a": unit(0)}, **calls())
                report = await store.warm(agent, IDENTITY, ["a"], config_generation=1, **calls())
                certificates[agent] = report.certificate
            first = AGENTS[0]  # evicted by the third agent's open
            await store.upsert(first, IDENTITY, {"b": unit(1)}, **calls())  # reopens it
            await store.query(AGENTS[1], certificates[AGENTS[1]], unit(0), 1, **calls())
            await store.query(AGENTS[2], certificates[AGENTS[2]], unit(0), 1, **calls())
            hits = await store.query(first, certificates[first], unit(1), 2, **calls())
            assert [hit.claim_id for hit in hits] == ["b", "a"]
            # A rebuild is a new namespace: the parked certificate goes with the old one.
            await store.rebuild(first, IDENTITY, **calls())
            with pytest.raises(VectorStoreCold):
                await store.query(first, certificates[first], unit(1), 2, **calls())
        finally:
            await store.aclose()

    asyncio.run(scenario())


def test_locomo_evaluates_more_conversations_than_the_open_store_cap(tmp_path: Path) -> None:
    """R-BEYOND-2, R-VEC-4: ten copies of one conversation, one agent each, over the cap
    of eight open stores. Every copy's vector ranking finds what the first copy's finds, at
    the same rank give or take a tie (ties break on claim ids, which differ per copy); an
    evicted copy gone FTS-only would find nothing by vector."""
    (sample,) = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    copies = [{**sample, "sample_id": f"copy-{n}"} for n in range(10)]
    path = tmp_path / "locomo-ten.json"
    path.write_text(json.dumps(copies), encoding="utf-8")

    report = asyncio.run(run_locomo(load_locomo(path), path=path, embedders=("hashing",)))

    assert report.samples == 10
    vector: dict[int, dict[int, int | None]] = {}
    for question in report.questions:
        if question.mode == "vector":
            vector.setdefault(question.sample, {})[question.question] = question.first_evidence_rank
    assert sorted(vector) == list(range(10))
    first = vector[0]
    assert sum(rank is not None for rank in first.values()) >= 4
    for ranks in vector.values():
        assert ranks.keys() == first.keys()
        for question, rank in ranks.items():
            expected = first[question]
            assert (rank is None) == (expected is None), (question, ranks, first)
            assert rank is None or expected is None or abs(rank - expected) <= 1
    assert all(scores.degraded == 0 for scores in report.modes)
