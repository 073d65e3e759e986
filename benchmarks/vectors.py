"""Vector-recall benchmark: exact top-10 latency of our store next to its baselines (R-BEYOND-3).

    python -m benchmarks.vectors             # 10k, 100k and 1M vectors × 384 dims
    python -m benchmarks.vectors --quick     # 10k and 100k, smaller bandwidth probe
    python -m benchmarks.vectors --json out.json

In one run and on the same vectors it measures: our `DuckDBVectorStore.query` (the full
async path: certificate check, validation, resident numpy scan, top-k with id tie-break);
a bare numpy exact scan (`X @ q`, argpartition, sort ten); DuckDB SQL
(`array_cosine_similarity(embedding, ?::FLOAT[384]) ... ORDER BY s DESC LIMIT 10`) over the
store's own file; and the memory-bandwidth bound — bytes scanned ÷ copy bandwidth measured in
this run. It also reports the store's bulk-write rate and warm-up time. Results go to a table
on stdout and to `benchmarks/results/vectors.json`. Memory: 1M × 384 float32 is 1.5 GB; the
run holds about three such copies at its peak. Our query and the numpy scan are timed
alternately, query by query, so a noisy neighbour slows both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from benchmarks.support import machine, timed, write_json
from memory_adapters.clocks import MonotonicClock
from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity

__all__ = ["main", "run"]

DIM = 384
TOP_K = 10
AGENT = "bench-agent"
IDENTITY = EmbeddingIdentity(provider="bench", model="random-normal", dim=DIM)
WRITE_BATCH = 50_000
SMALL_BATCHES = 20
RESULTS = Path(__file__).with_name("results") / "vectors.json"
SQL = (
    "SELECT memory_id, array_cosine_similarity(embedding, ?::FLOAT[384]) AS s "
    "FROM memory_vector ORDER BY s DESC LIMIT 10"
)


def measure_bandwidth(mebibytes: int, repeats: int = 5) -> dict[str, float]:
    """STREAM-like copy (read + write counted) and read-only sum, best of `repeats`, GB/s."""
    count = mebibytes * (1 << 20) // 4
    source = np.ones(count, dtype=np.float32)
    target = np.empty_like(source)
    np.copyto(target, source)  # touch every page first
    copies, sums = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(target, source)
        copies.append(time.perf_counter() - start)
        start = time.perf_counter()
        source.sum()
        sums.append(time.perf_counter() - start)
    nbytes = source.nbytes
    del source, target
    gc.collect()
    return {
        "array_mib": mebibytes,
        "copy_gb_s": 2 * nbytes / min(copies) / 1e9,
        "read_gb_s": nbytes / min(sums) / 1e9,
    }


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "min_ms": 1000 * ordered[0],
        "p50_ms": 1000 * statistics.median(ordered),
        "p95_ms": 1000 * ordered[int(0.95 * (len(ordered) - 1))],
    }


def _numpy_top_k(unit: np.ndarray, query: np.ndarray) -> np.ndarray:
    scores = unit @ query
    top = np.argpartition(scores, -TOP_K)[-TOP_K:]
    return top[np.argsort(-scores[top])]


async def _store_phase(
    root: Path, ids: list[str], vectors: np.ndarray, queries: np.ndarray
) -> dict[str, Any]:
    clock = MonotonicClock()

    def calls() -> dict[str, Any]:
        return {"deadline": Deadline.after(clock, 600), "cancel": CancellationToken()}

    store = DuckDBVectorStore(root, clock)
    start = time.perf_counter()
    for low in range(0, len(ids), WRITE_BATCH):
        batch = dict(
            zip(ids[low : low + WRITE_BATCH], vectors[low : low + WRITE_BATCH], strict=True)
        )
        await store.upsert(AGENT, IDENTITY, batch, **calls())
    write_seconds = time.perf_counter() - start
    await store.aclose()

    store = DuckDBVectorStore(root, clock)  # a cold process: the matrix comes from the file
    start = time.perf_counter()
    report = await store.warm(AGENT, IDENTITY, ids, config_generation=1, **calls())
    warm_seconds = time.perf_counter() - start
    certificate = report.certificate
    # The numpy baseline scans the same vectors, normalised in place (no extra copy). The
    # two are timed alternately per query, so load from other processes hits both alike.
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    await store.query(AGENT, certificate, queries[0], TOP_K, **calls())
    _numpy_top_k(vectors, queries[0])
    samples, answers, numpy_samples, numpy_answers = [], [], [], []
    for query in queries:
        start = time.perf_counter()
        hits = await store.query(AGENT, certificate, query, TOP_K, **calls())
        samples.append(time.perf_counter() - start)
        answers.append([hit.claim_id for hit in hits])
        start = time.perf_counter()
        top = _numpy_top_k(vectors, query)
        numpy_samples.append(time.perf_counter() - start)
        numpy_answers.append([ids[i] for i in top])
    batch_start = time.perf_counter()
    await store.query_batch(AGENT, certificate, queries[:16], TOP_K, **calls())
    batch_seconds = time.perf_counter() - batch_start
    # The embedding pipeline's shape: batches of 50 new vectors into a warm store.
    small = np.random.default_rng(1).standard_normal((SMALL_BATCHES * 50, DIM), dtype=np.float32)
    start = time.perf_counter()
    for batch in range(SMALL_BATCHES):
        rows = {f"new-{batch}-{i}": small[batch * 50 + i] for i in range(50)}
        await store.upsert(AGENT, IDENTITY, rows, **calls())
    small_seconds = time.perf_counter() - start
    # ...and deleted again, so the SQL baseline below scans exactly the vectors measured above.
    added = [f"new-{batch}-{i}" for batch in range(SMALL_BATCHES) for i in range(50)]
    start = time.perf_counter()
    removed = await store.delete(AGENT, added, **calls())
    delete_seconds = time.perf_counter() - start
    assert removed == len(added)
    await store.aclose()
    return {
        "samples": samples,
        "answers": answers,
        "numpy_samples": numpy_samples,
        "numpy_answers": numpy_answers,
        "write_rows_per_s": len(ids) / write_seconds,
        "write50_rows_per_s": SMALL_BATCHES * 50 / small_seconds,
        "delete_rows_per_s": SMALL_BATCHES * 50 / delete_seconds,
        "warm_s": warm_seconds,
        "batch16_ms": 1000 * batch_seconds,
    }


def _duckdb_sql_phase(path: Path, queries: np.ndarray, repeats: int) -> dict[str, Any]:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        conn.execute(SQL, [queries[0].tolist()]).fetchall()  # warm the buffer pool
        answers: list[list[str]] = []

        def one(query: np.ndarray) -> Callable[[], object]:
            return lambda: answers.append(
                [row[0] for row in conn.execute(SQL, [query.tolist()]).fetchall()]
            )

        samples = timed([one(query) for query in queries[:repeats]])
        threads = conn.execute("SELECT current_setting('threads')").fetchall()[0][0]
    finally:
        conn.close()
    return {"samples": samples, "answers": answers, "threads": threads}


def bench_size(count: int, queries_per_size: int, sql_repeats: int, seed: int) -> dict[str, Any]:
    """Every measurement for one table size."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM), dtype=np.float32)
    queries = rng.standard_normal((queries_per_size, DIM), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    ids = [f"claim-{i:08d}" for i in range(count)]
    with tempfile.TemporaryDirectory(prefix="bench-vectors-") as tmp:
        root = Path(tmp)
        ours = asyncio.run(_store_phase(root, ids, vectors, queries))
        del vectors
        gc.collect()
        sql = _duckdb_sql_phase(root / f"{AGENT}.v2.duckdb", queries, sql_repeats)
        file_mb = (root / f"{AGENT}.v2.duckdb").stat().st_size / 1e6
    numpy_answers = ours["numpy_answers"]
    agree = sum(a == b for a, b in zip(ours["answers"], numpy_answers, strict=True))
    sql_agree = sum(a == b for a, b in zip(sql["answers"], numpy_answers, strict=False))
    return {
        "n": count,
        "dim": DIM,
        "bytes_scanned": count * DIM * 4,
        "ours": _ms(ours["samples"]),
        "numpy": _ms(ours["numpy_samples"]),
        "duckdb_sql": _ms(sql["samples"]),
        "duckdb_threads": sql["threads"],
        "ours_batch16_ms": ours["batch16_ms"],
        "ours_write_rows_per_s": ours["write_rows_per_s"],
        "ours_write50_rows_per_s": ours["write50_rows_per_s"],
        "ours_delete_rows_per_s": ours["delete_rows_per_s"],
        "ours_warm_s": ours["warm_s"],
        "duckdb_file_mb": file_mb,
        "top10_identical_to_numpy": {
            "ours": f"{agree}/{len(queries)}",
            "sql": f"{sql_agree}/{len(sql['answers'])}",
        },
    }


def guard_overhead(calls: int) -> dict[str, dict[str, float]]:
    """Per-call cost of the native-call guard (`duckdb_vectors.guard`): a call that does
    nothing, and a one-row DuckDB point query, each `calls` times after 200 to warm up. The
    first is pure overhead: the worker hand-off and the result's way back to the loop."""
    from memory_adapters.duckdb_vectors.guard import NativeGuard

    guard = NativeGuard(grace_seconds=5.0, workers=8, spare=8)
    clock = MonotonicClock()
    conn = duckdb.connect()
    conn.execute("CREATE TABLE t AS SELECT range AS i FROM range(1000)")
    works: dict[str, Callable[[object], object]] = {
        "noop": lambda abort: None,
        "point_query": lambda abort: conn.execute("SELECT i FROM t WHERE i = 7").fetchall(),
    }

    async def measure() -> dict[str, dict[str, float]]:
        out = {}
        for name, work in works.items():
            samples = []
            for n in range(200 + calls):
                started = time.perf_counter()
                await guard.run(
                    work, what=name, deadline=Deadline.after(clock, 5), cancel=CancellationToken()
                )
                if n >= 200:
                    samples.append(time.perf_counter() - started)
            samples.sort()
            out[name] = {
                "p50_us": round(1e6 * statistics.median(samples), 1),
                "p99_us": round(1e6 * samples[int(0.99 * (len(samples) - 1))], 1),
            }
        return out

    try:
        return asyncio.run(measure())
    finally:
        guard.close()
        conn.close()


def run(sizes: Sequence[int], *, quick: bool = False, seed: int = 20261130) -> dict[str, Any]:
    """The whole benchmark; returns the JSON document."""
    load_before = os.getloadavg()
    bandwidth = measure_bandwidth(256 if quick else 1024)
    results = []
    for count in sizes:
        queries = 100 if count <= 100_000 else 30
        sql_repeats = 20 if count <= 100_000 else 5
        result = bench_size(count, queries, sql_repeats, seed)
        bound_ms = 1000 * result["bytes_scanned"] / (bandwidth["copy_gb_s"] * 1e9)
        result["bandwidth_bound_ms"] = bound_ms
        # A scan only reads, and one read stream is slower than copy's read + write pair.
        result["read_bandwidth_bound_ms"] = (
            1000 * result["bytes_scanned"] / (bandwidth["read_gb_s"] * 1e9)
        )
        result["ratios"] = {
            "ours_vs_numpy": result["ours"]["p50_ms"] / result["numpy"]["p50_ms"],
            "ours_vs_numpy_min": result["ours"]["min_ms"] / result["numpy"]["min_ms"],
            "ours_vs_bound": result["ours"]["p50_ms"] / bound_ms,
            "numpy_vs_bound": result["numpy"]["p50_ms"] / bound_ms,
            "sql_vs_ours": result["duckdb_sql"]["p50_ms"] / result["ours"]["p50_ms"],
        }
        results.append(result)
        _print_row(result)
    return {
        "benchmark": "vectors",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(load_before, numpy=np.__version__, duckdb=duckdb.__version__),
        "bandwidth": bandwidth,
        "top_k": TOP_K,
        "results": results,
    }


_HEADER = (
    f"{'N':>9} {'ours p50':>9} {'numpy p50':>9} {'SQL p50':>9} {'bound':>8} "
    f"{'ours/np':>7} {'ours/bnd':>8} {'SQL/ours':>8} {'write r/s':>10} {'warm s':>7}"
)


def _print_row(result: dict[str, Any]) -> None:
    ratios = result["ratios"]
    print(
        f"{result['n']:>9,} {result['ours']['p50_ms']:>8.3f}m {result['numpy']['p50_ms']:>8.3f}m "
        f"{result['duckdb_sql']['p50_ms']:>8.2f}m {result['bandwidth_bound_ms']:>7.3f}m "
        f"{ratios['ours_vs_numpy']:>7.2f} {ratios['ours_vs_bound']:>8.2f} "
        f"{ratios['sql_vs_ours']:>8.1f} {result['ours_write_rows_per_s']:>10,.0f} "
        f"{result['ours_warm_s']:>7.2f}",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vectors", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10k and 100k only")
    parser.add_argument("--sizes", help="comma-separated table sizes (overrides --quick)")
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"default: {RESULTS}")
    parser.add_argument(
        "--guard-calls",
        type=int,
        default=0,
        help="only measure the native-call guard's per-call overhead over this many calls",
    )
    args = parser.parse_args(argv)
    if args.guard_calls:
        print(json.dumps({"guard": guard_overhead(args.guard_calls)}, indent=2))
        return 0
    if args.sizes:
        sizes = [int(size) for size in args.sizes.split(",")]
    else:
        sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    print(f"exact top-{TOP_K}, dim {DIM}; ms are per query (p50); bound = bytes ÷ copy bandwidth")
    print(_HEADER, flush=True)
    document = run(sizes, quick=args.quick)
    bandwidth = document["bandwidth"]
    print(
        f"copy bandwidth {bandwidth['copy_gb_s']:.1f} GB/s (read-only sum "
        f"{bandwidth['read_gb_s']:.1f} GB/s, {bandwidth['array_mib']} MiB arrays)"
    )
    write_json(args.json, document)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
