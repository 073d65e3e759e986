"""DuckDBVectorStore behaviour beyond the shared contract: deadlines mid-call, quarantine on a
hang, the resident matrix kept in step, bulk writes, the open-store cap (R-VEC-1, R-VEC-3)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import duckdb
import numpy as np
import pytest
from duckdb_vector_support import IDENTITY

from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_adapters.duckdb_vectors import store as store_module
from memory_adapters.duckdb_vectors.agent_store import APPENDER_MAX_ROWS
from memory_adapters.duckdb_vectors.matrix import ResidentMatrix
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import DeadlineExceeded, StoreQuarantined, ValidationError
from memory_core.ports.vectors import VectorHealth, VectorStoreCold

Opener = Callable[..., DuckDBVectorStore]
Calls = Callable[..., dict[str, Any]]
WIDE = EmbeddingIdentity(provider="test", model="wide", dim=384)


def random_vectors(count: int, dim: int, seed: int = 1, prefix: str = "c") -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, dim)).astype(np.float32)
    return {f"{prefix}{i:06d}": matrix[i] for i in range(count)}


def test_an_upsert_cut_off_by_its_deadline_writes_nothing_and_the_store_recovers(
    open_store: Opener, calls: Calls
) -> None:
    """R-VEC-3: the native write is interrupted and rolled back; the agent is suspect until
    its next successful call, and nothing half-written is visible."""
    big = random_vectors(20_000, 384)

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", WIDE, {"seed": np.ones(384)}, **calls())
        with pytest.raises(DeadlineExceeded):
            await store.upsert("a", WIDE, big, **calls(0.002))
        assert store.health("a") is VectorHealth.SUSPECT
        assert await store.list_ids("a", **calls()) == ["seed"]
        assert store.health("a") is VectorHealth.AVAILABLE
        report = await store.warm("a", WIDE, ["seed"], config_generation=1, **calls())
        assert report.vector_count == 1

    asyncio.run(scenario())


def test_a_call_that_never_settles_quarantines_the_agent_and_the_next_process_recovers(
    root: Path, clock: ManualClock, calls: Calls
) -> None:
    """R-VEC-3: a hung native call becomes StoreQuarantined within the grace period, the
    marker is persisted, the agent stays closed for this store, and a new store (the next
    process) wipes and republishes."""
    release = threading.Event()
    armed = threading.Event()
    entered = threading.Event()

    def hang_in_staging(step: str) -> None:
        if step == "staging-created" and armed.is_set():
            entered.set()
            release.wait(30)

    before = set(threading.enumerate())

    async def scenario() -> None:
        store = DuckDBVectorStore(root, clock, grace_seconds=0.1, on_step=hang_in_staging)
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        other = EmbeddingIdentity(provider="test", model="next", dim=4)
        armed.set()
        stop = CancellationToken()
        rebuild = asyncio.ensure_future(
            store.rebuild("a", other, deadline=Deadline.after(clock, 60), cancel=stop)
        )
        # Cancel once the worker is stuck, whatever the machine's speed: the guard then
        # interrupts, waits out the grace period and gives up on the call.
        await asyncio.get_running_loop().run_in_executor(None, entered.wait, 30)
        stop.cancel("host shutting down")
        with pytest.raises(StoreQuarantined):
            await rebuild
        assert store.health("a") is VectorHealth.QUARANTINED
        assert (root / "a.v2.duckdb.quarantine").exists()
        with pytest.raises(StoreQuarantined):
            await store.upsert("a", IDENTITY, {"y": [0, 1, 0, 0]}, **calls())
        release.set()
        # Closed first: the pool's idle workers then exit, and the released one after its
        # call. Only this store's workers are joined: other tests' pools may still idle.
        await store.aclose()
        for thread in set(threading.enumerate()) - before:
            if thread.name.startswith("duckdb-vectors"):
                thread.join(10)

        recovered = DuckDBVectorStore(root, clock)
        assert await recovered.list_ids("a", **calls()) == []
        assert not (root / "a.v2.duckdb.quarantine").exists()
        await recovered.upsert("a", IDENTITY, {"y": [0, 1, 0, 0]}, **calls())
        assert await recovered.list_ids("a", **calls()) == ["y"]
        await recovered.aclose()

    try:
        asyncio.run(scenario())
    finally:
        release.set()


def test_writes_after_warm_up_reach_queries_without_another_warm_up(
    open_store: Opener, calls: Calls
) -> None:
    """R-VEC-1: the resident matrix follows every committed upsert and delete."""

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        cert = (await store.warm("a", IDENTITY, ["x"], config_generation=1, **calls())).certificate
        await store.upsert("a", IDENTITY, {"y": [0, 1, 0, 0], "x": [0, 0, 1, 0]}, **calls())
        hits = await store.query("a", cert, [0, 1, 0, 0], 1, **calls())
        assert [hit.claim_id for hit in hits] == ["y"]
        hits = await store.query("a", cert, [0, 0, 1, 0], 1, **calls())
        assert [hit.claim_id for hit in hits] == ["x"]
        assert await store.delete("a", ["y"], **calls()) == 1
        hits = await store.query("a", cert, [0, 1, 0, 0], 5, **calls())
        assert [hit.claim_id for hit in hits] == ["x"]

    asyncio.run(scenario())


def test_bulk_batches_round_trip_exactly_and_large_scans_leave_the_event_loop(
    open_store: Opener, calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-VEC-1: a batch above the appender threshold is written through a registered numpy
    scan without changing a value; a matrix above the inline bound is scanned in a worker
    and still ranks exactly (the bound is lowered: the real one is hundreds of MiB)."""
    inline = 1 << 20
    monkeypatch.setattr(store_module, "INLINE_SCAN_BYTES", inline)
    count = max(APPENDER_MAX_ROWS + 1, inline // (384 * 4) + 1)
    vectors = random_vectors(count, 384)
    assert count * 384 * 4 > inline
    scanned_on: list[threading.Thread] = []
    top_k = ResidentMatrix.top_k

    def watched(self: ResidentMatrix, *args: Any, **kwargs: Any) -> Any:
        scanned_on.append(threading.current_thread())
        return top_k(self, *args, **kwargs)

    monkeypatch.setattr(ResidentMatrix, "top_k", watched)

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", WIDE, vectors, **calls())
        await store.aclose()
        reopened = open_store()
        report = await reopened.warm("a", WIDE, list(vectors), config_generation=1, **calls())
        assert report.vector_count == count
        ids = list(vectors)
        matrix = np.stack([vectors[claim_id] for claim_id in ids]).astype(np.float64)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        query = np.random.default_rng(9).standard_normal(384)
        expected = [ids[i] for i in np.argsort(-(matrix @ (query / np.linalg.norm(query))))[:10]]
        hits = await reopened.query("a", report.certificate, query.tolist(), 10, **calls())
        assert [hit.claim_id for hit in hits] == expected
        for claim_id in (ids[0], ids[-1]):
            hits = await reopened.query("a", report.certificate, vectors[claim_id], 1, **calls())
            assert hits[0].claim_id == claim_id
            assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
        assert scanned_on and threading.main_thread() not in scanned_on

    asyncio.run(scenario())


@pytest.mark.parametrize("count", [APPENDER_MAX_ROWS, APPENDER_MAX_ROWS + 1, 100])
def test_every_write_path_stores_the_exact_float32_rows_and_replaces_by_id(
    count: int, root: Path, open_store: Opener, calls: Calls
) -> None:
    """R-VEC-1: the appender and the registered scan on either side of their threshold
    write each claim's float32 row bit for bit, under its own id, and a second upsert of
    the same ids replaces the rows."""
    first = random_vectors(count, 384, seed=3)
    second = random_vectors(count, 384, seed=4)

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", WIDE, first, **calls())
        await store.upsert("a", WIDE, second, **calls())
        await store.aclose()

    asyncio.run(scenario())
    with duckdb.connect(str(root / "a.v2.duckdb"), read_only=True) as conn:
        stored = dict(conn.execute("SELECT memory_id, embedding FROM memory_vector").fetchall())
    assert sorted(stored) == sorted(second)
    for claim_id, row in second.items():
        assert np.array_equal(np.asarray(stored[claim_id], dtype=np.float32), row)


def test_stored_rows_that_cannot_be_scanned_are_deleted_and_reported_missing(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-4: a NaN or zero row written behind the store's back never reaches a query."""

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"good": [1, 0, 0, 0]}, **calls())
        await store.aclose()
        conn = duckdb.connect(str(root / "a.v2.duckdb"))
        conn.execute("INSERT INTO memory_vector VALUES ('nan', ['nan'::FLOAT, 1, 0, 0])")
        conn.execute("INSERT INTO memory_vector VALUES ('zero', [0, 0, 0, 0])")
        conn.close()
        reopened = open_store()
        report = await reopened.warm(
            "a", IDENTITY, ["good", "nan", "zero"], config_generation=1, **calls()
        )
        assert report.missing_ids == ("nan", "zero")
        assert report.orphans_deleted == 2
        assert await reopened.list_ids("a", **calls()) == ["good"]

    asyncio.run(scenario())


def test_vectors_that_overflow_float32_are_rejected(open_store: Opener, calls: Calls) -> None:
    """R-VEC-1: the check runs on the values that would be stored."""

    async def scenario() -> None:
        store = open_store()
        with pytest.raises(ValidationError) as raised:
            await store.upsert("a", IDENTITY, {"huge": [1e39, 0, 0, 0]}, **calls())
        assert raised.value.field == "vectors['huge']"
        with pytest.raises(ValidationError):
            await store.upsert("a", IDENTITY, {"text": ["1", "0", "0", "0"]}, **calls())  # type: ignore[dict-item]
        assert await store.list_ids("a", **calls()) == []

    asyncio.run(scenario())


def test_concurrent_upserts_to_one_agent_are_serialised(open_store: Opener, calls: Calls) -> None:
    """R-WRITE-7: one writer per agent at a time; every batch lands."""

    async def scenario() -> None:
        store = open_store()
        batches = [{f"b{batch}-{i}": [1, batch, i, 0.5] for i in range(20)} for batch in range(8)]
        await asyncio.gather(*(store.upsert("a", IDENTITY, b, **calls()) for b in batches))
        ids = await store.list_ids("a", **calls())
        assert len(ids) == 160

    asyncio.run(scenario())


def test_idle_stores_beyond_the_cap_are_closed_and_resume_under_their_certificates(
    open_store: Opener, calls: Calls
) -> None:
    """R-VEC-4: the least recently used agent is closed when a third opens under a cap of
    two; its data stays, and its next query reopens it under the certificate it was warmed
    with (closing the then least recently used one), so eviction never leaves it cold."""

    async def scenario() -> None:
        store = open_store(max_open=2)
        certs = {}
        for agent in ("a", "b"):
            await store.upsert(agent, IDENTITY, {f"{agent}1": [1, 0, 0, 0]}, **calls())
            report = await store.warm(
                agent, IDENTITY, [f"{agent}1"], config_generation=1, **calls()
            )
            certs[agent] = report.certificate
        await store.query("b", certs["b"], [1, 0, 0, 0], 1, **calls())  # a is now the oldest
        await store.upsert("c", IDENTITY, {"c1": [1, 0, 0, 0]}, **calls())
        assert store._agents.get("a").store is None  # evicted
        for agent in ("a", "b", "a"):
            hits = await store.query(agent, certs[agent], [1, 0, 0, 0], 1, **calls())
            assert [hit.claim_id for hit in hits] == [f"{agent}1"]
            assert sum(s is not None for s in (store._agents.get(x).store for x in "abc")) <= 2
        stale = attrs.evolve(certs["a"], store_generation=certs["a"].store_generation + 99)
        with pytest.raises(VectorStoreCold):
            await store.query("a", stale, [1, 0, 0, 0], 1, **calls())

    asyncio.run(scenario())


def test_the_in_memory_mode_touches_no_files_and_forgets_on_close(
    clock: ManualClock, calls: Calls, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-VEC-1: the "memory" registration is the same store over private databases."""
    monkeypatch.chdir(tmp_path)

    async def scenario() -> None:
        store = DuckDBVectorStore.in_memory(clock)
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        report = await store.warm("a", IDENTITY, ["x"], config_generation=1, **calls())
        assert [
            h.claim_id
            for h in await store.query("a", report.certificate, [1, 0, 0, 0], 1, **calls())
        ] == ["x"]
        await store.aclose()
        assert DuckDBVectorStore.in_memory(clock).root is None

    asyncio.run(scenario())
    assert list(tmp_path.iterdir()) == []
