"""Cold-start benchmark: a fresh process from `import` to its first turn (issue 15).

    python -m benchmarks.cold_start                # 100k claims for the agent
    python -m benchmarks.cold_start --quick        # 10k
    python -m benchmarks.cold_start --sizes 2000 --repeats 1 --json out.json
    python -m benchmarks.cold_start --cache /tmp/cold-cache   # build once, reuse after

Per size N, a data dir is built once as in `benchmarks.recall` (N claims of one agent through
the bulk path, N synthetic vectors, marked ready; no noise agents), then one unmeasured
process (it writes the bytecode, as installing does, and the vector snapshot a clean close
leaves), then `--repeats` fresh Python processes each time, in order:

- imports: the plugin host (`memory_plugins.bootstrap`, `memory_plugins.loader`), nothing
  of the benchmark's (its fixed embedder is inline);
- plugin discovery: `load_plugins` (entry points, registration modules, registrations);
- adapter imports: the libraries of the configured adapters (SQLite, DuckDB, the rules
  extractor), which factories import when they run; timed on their own so that the RSS
  before open holds the code and the resident delta only the data;
- open: `open_memory` on the data dir (schema check, startup repair, vector store open);
- warm: `MemoryService.warm(agent)` (the agent's vectors into the resident matrix);
- first turn: `session.prepare_turn` with a fixed query vector (no model);
and reports each step's seconds, the process's peak RSS, and its anonymous RSS after warm
minus before open (the data; the shared library code the first DuckDB connection faults in
is left out), divided by the raw matrix bytes (N × 384 × 4): the resident memory per claim
against the ≤ 1.3× goal. The total RSS delta is reported beside it. The model load is not
part of it (the query vector is fixed).
Results: a table on stdout, JSON to `benchmarks/results/cold_start.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import recall
from benchmarks.support import load_line, machine, parse_sizes, write_json

__all__ = ["main", "run"]

SIZES = (100_000,)
QUICK_SIZES = (10_000,)
RESULTS = Path(__file__).with_name("results") / "cold_start.json"
STEPS = ("imports_s", "discovery_s", "adapter_imports_s", "open_s", "warm_s", "first_turn_s")

# The identity the data dir's vectors were written under, and the agent (benchmarks.recall).
_IDENTITY = (
    recall.FixedQueryEmbedder().provider_id,
    recall.FixedQueryEmbedder().model_id,
    recall.DIM,
    recall.AGENT,
)

# Run in a child process: everything it measures must start cold.
_CHILD = r"""
import asyncio, json, resource, sys, time
def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
def anon_mib():
    # Anonymous pages only: the data. The first DuckDB connection faults in ~26 MiB of the
    # library's code (file-backed, shared, once per process), which is no claim's memory.
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon:")) / 1024
provider, model, dim, AGENT = json.loads(sys.argv[2])
class Fixed:
    # `recall.FixedQueryEmbedder`'s answer to any unknown text, without importing the
    # benchmark module (numpy, apsw): the imports timed must be the host's alone.
    provider_id, model_id = provider, model
    async def dimensions(self, *, deadline, cancel):
        return dim
    async def embed(self, texts, *, purpose, deadline, cancel):
        return [[1.0] + [0.0] * (dim - 1) for _ in texts]
    async def aclose(self):
        pass
start = time.perf_counter()
from memory_plugins.bootstrap import open_memory
from memory_plugins.loader import load_plugins
imported = time.perf_counter()
registry = load_plugins(strict=True, distributions={"agent-memory"}).registry
discovered = time.perf_counter()
# The configured adapters' libraries load here (lazily, since discovery no longer imports
# them), so that RSS before open holds the code and the resident delta only the data.
import memory_adapters.duckdb_vectors, memory_adapters.extractors, memory_adapters.sqlite_store
adapters = time.perf_counter()
embedder = Fixed()
before_open, anon_before_open = rss_mib(), anon_mib()
memory = open_memory(sys.argv[1], overrides={"embedding_provider": embedder}, registry=registry)
opened = time.perf_counter()
async def rest():
    ready = await memory.warm(AGENT)
    warmed = time.perf_counter()
    after_warm = (rss_mib(), anon_mib())
    turn = await memory.session(AGENT, "cold").prepare_turn("m1", "what do I like to drink?")
    first = time.perf_counter()
    await memory.aclose()
    return ready, warmed, after_warm, first, turn.outcome
ready, warmed, after_warm, first, outcome = asyncio.run(rest())
print(json.dumps({
    "imports_s": imported - start, "discovery_s": discovered - imported,
    "adapter_imports_s": adapters - discovered,
    "open_s": opened - adapters, "warm_s": warmed - opened, "first_turn_s": first - warmed,
    "total_s": first - start, "ready": ready, "outcome": str(outcome),
    "rss_before_open_mib": before_open, "rss_after_warm_mib": after_warm[0],
    "anon_before_open_mib": anon_before_open, "anon_after_warm_mib": after_warm[1],
    "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def _child(data_dir: Path, pycache: Path) -> dict[str, Any]:
    # Bytecode as an installed package has it: written once (by the unmeasured first child),
    # read after. With PYTHONDONTWRITEBYTECODE every start compiled ~500 modules from source
    # (2 s of the imports under load), which no installed host pays.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(data_dir), json.dumps(_IDENTITY)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=3_600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cold-start child failed: {done.stderr[-2_000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _fill(root: Path, count: int, seed: int) -> dict[str, Any]:
    """Build the data dir under `root` (`root/data`); returns the build figures."""
    from memory_plugins.loader import load_plugins

    registry = load_plugins(strict=True, distributions={"agent-memory"}).registry
    corpus = recall.Corpus(seed, max(1, count // recall.CLUSTER))
    matrix = corpus.vectors(count)
    build = asyncio.run(
        recall._build(
            root,
            registry,
            embedder=recall.FixedQueryEmbedder(),
            corpus=corpus,
            count=count,
            noise_rows=0,
            matrix=matrix,
        )
    )
    return {"insert_rows_per_s": build["insert_rows_per_s"]}


def _cached_fill(cache: Path, count: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """The data dir of (count, seed) under `cache`, built on first use: a 100k fill takes
    minutes, a cold start seconds. A fill interrupted before its stamp is rebuilt."""
    root = cache / f"n{count}-s{seed}"
    stamp = root / "built.json"
    if stamp.exists():
        return root, dict(json.loads(stamp.read_text(encoding="utf-8")))
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    build = _fill(root, count, seed)
    stamp.write_text(json.dumps(build), encoding="utf-8")
    return root, build


def bench_size(count: int, *, repeats: int, seed: int, cache: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        if cache is None:
            root = Path(tmp)
            build = _fill(root, count, seed)
        else:
            root, build = _cached_fill(cache, count, seed)
        pycache = Path(tmp) / "pycache"
        # Unmeasured: writes the bytecode, and the vector snapshot a clean close leaves.
        recall._say("  cold start 0 (priming, not measured)")
        _child(root / "data", pycache)
        runs = []
        for repeat in range(repeats):
            recall._say(f"  cold start {repeat + 1}/{repeats}")
            runs.append(_child(root / "data", pycache))
        sqlite_mb = (root / "data" / "memory.sqlite3").stat().st_size / 1e6
    raw_mib = count * recall.DIM * 4 / 2**20
    resident = [run["anon_after_warm_mib"] - run["anon_before_open_mib"] for run in runs]
    rss = [run["rss_after_warm_mib"] - run["rss_before_open_mib"] for run in runs]
    return {
        "n": count,
        "repeats": repeats,
        "median": {
            key: statistics.median(run[key] for run in runs)
            for key in (*STEPS, "total_s", "peak_rss_mib")
        },
        "raw_matrix_mib": raw_mib,
        "resident_after_warm_mib": statistics.median(resident),
        "resident_vs_raw": statistics.median(resident) / raw_mib,
        "rss_delta_after_warm_mib": statistics.median(rss),
        "runs": runs,
        "build": {**build, "sqlite_file_mb": sqlite_mb, "cached": cache is not None},
    }


def run(
    sizes: Sequence[int], *, repeats: int, seed: int = 20261201, cache: Path | None = None
) -> dict[str, Any]:
    started = time.perf_counter()
    load_before = os.getloadavg()
    results = []
    for count in sizes:
        recall._say(f"N = {count:,}: {repeats} cold starts")
        results.append(bench_size(count, repeats=repeats, seed=seed, cache=cache))
    return {
        "benchmark": "cold_start",
        "when": recall.datetime.now(recall.UTC).isoformat(timespec="seconds"),
        "machine": machine(load_before),
        "settings": {
            "repeats": repeats,
            "seed": seed,
            "query_embedding": "fixed vector",
            "bytecode": "cached, written by an unmeasured priming process",
        },
        "total_seconds": time.perf_counter() - started,
        "results": results,
    }


def report(document: dict[str, Any], write: Callable[[str], None] = print) -> None:
    write("cold start to the first turn, fresh process, median seconds (model load excluded)")
    write(
        f"{'N':>9} "
        + " ".join(f"{step[:-2]:>15}" for step in (*STEPS, "total_s"))
        + f" {'peak MiB':>9} {'RSS Δ':>7} {'resident':>9} {'raw':>7} {'res/raw':>7}"
    )
    for r in document["results"]:
        median = r["median"]
        write(
            f"{r['n']:>9,} "
            + " ".join(f"{median[step]:>15.3f}" for step in (*STEPS, "total_s"))
            + f" {median['peak_rss_mib']:>9.0f} {r['rss_delta_after_warm_mib']:>7.0f}"
            + f" {r['resident_after_warm_mib']:>9.0f}"
            + f" {r['raw_matrix_mib']:>7.0f} {r['resident_vs_raw']:>7.2f}"
        )
    write(load_line(document))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cold_start",
        description="A fresh process from import to its first turn, and its resident memory.",
    )
    parser.add_argument("--quick", action="store_true", help="10k claims")
    parser.add_argument("--sizes", help="comma-separated claim counts")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per size")
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"default: {RESULTS}")
    parser.add_argument(
        "--cache", type=Path, help="keep each size's data dir here and reuse it on later runs"
    )
    args = parser.parse_args(argv)
    if args.sizes:
        sizes = parse_sizes(parser, args.sizes, minimum=recall.CLUSTER)
    else:
        sizes = list(QUICK_SIZES if args.quick else SIZES)
    if args.repeats < 1:
        parser.error("--repeats: at least 1")
    document = run(sizes, repeats=args.repeats, cache=args.cache)
    report(document)
    write_json(args.json, document)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
