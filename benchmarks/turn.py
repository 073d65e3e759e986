"""Turn benchmark: `prepare_turn` next to bare FTS5 + a numpy exact scan, in one run (R-READ-1).

    python -m benchmarks.turn                      # 10k and 100k claims per agent
    python -m benchmarks.turn --quick              # 10k, 10 noise agents × 1,000
    python -m benchmarks.turn --sizes 2000 --queries 10 --json out.json
    python -m benchmarks.turn --cache /tmp/turn-cache  # build each size once, reuse it after

Per size N, one agent holds N claims next to 10 other agents of 10,000 claims each
(10 × 1,000 with `--quick`), built as in `benchmarks.recall` (the store's bulk path, synthetic
clustered vectors marked ready with the store's own statement). Claim texts are the recall
corpus's topic sentences with a natural-English word or two mixed in (weekdays, "goldfish",
"birthday": the words whose trigrams are substrings of many others) and, every 25th claim, a
Chinese or Japanese phrase, so every part of the query mix has something to find.

The query mix (`--queries` per size, cycled in this order):
- rare: a topic word (~N/100 claims) and a mid-frequency word;
- common: two of the most frequent background words, and a natural word ("day", "old");
- stop-word questions: "what did I say about it?" — almost nothing survives as a term;
- CJK: a stored phrase or a part of one;
- pastes: 2,000 characters of mixed claim text, as when a user pastes a document.

Then, query by query and alternately (a noisy neighbour slows all alike), it times:
(a) ours, query embedding excluded: `session.prepare_turn` with the query vector served by
    a fixed-vector provider (`bench-fixed`), so the model costs nothing;
(b) ours, query embedding included: the same turn (another message id) through a provider
    that also runs the default embedder (local MiniLM) on the query text before answering;
    when the model is not installed this column is left out;
(c) the baseline: bare FTS5 (the store's tokenizer, the same rows, `search_terms` of the
    query OR-ed, joined to the rows and filtered to the agent, LIMIT 24) plus a bare numpy
    exact top-10 over the same normalised matrix, each timed alone.

p50/p95 of each, the ratios ours / baseline, and the stage breakdown of our turn: the
retrieval diagnostics' stages (`StageTimings`; `revalidation` is the one read of the FTS and
vector hits' rows) and "other": the FTS search and lexical rank (no stage of their own), the
one read of the directives, the stored working projection and the persona — plus the claims
listing when that row must be rebuilt — the allocator and assembly, and whatever of the
access and anchor writes of earlier turns runs inside this one (access counts are coalesced
per session, see `memory_core.services.read.bookkeeping`).
Results: a table on stdout, progress on stderr, JSON to `benchmarks/results/turn.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from benchmarks import recall
from benchmarks.recall import Corpus, FixedQueryEmbedder
from memory_adapters.sqlite_store.migrations import probe_tokenizer
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import EmbeddingPurpose
from memory_core.services.memory import MemoryService
from memory_core.services.read.keywords import search_terms
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry

__all__ = ["main", "run"]

AGENT = recall.AGENT
SIZES = (10_000, 100_000)
QUICK_SIZES = (10_000,)
NOISE_ROWS = 10_000
QUICK_NOISE_ROWS = 1_000
FTS_LIMIT = 24  # our first FTS round for the injection purpose reads top-k × 4
NUMPY_TOP_K = recall.NUMPY_TOP_K
RESULTS = Path(__file__).with_name("results") / "turn.json"
_BUILT = "built.json"  # written last by a build: its presence says the cached data is whole
STAGES = ("keywords", "query_embedding", "vector", "revalidation", "assembly")
KINDS = ("rare", "common", "stopwords", "cjk", "paste")
# Natural words: "day" is a substring of every weekday and "birthday", "old" of "goldfish".
NATURAL = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "birthday",
    "holiday",
    "today",
    "goldfish",
    "golden",
    "household",
    "folder",
    "bold",
    "older",
    "cold",
    "told",
    "gold",
    "scold",
]
CJK_PHRASES = (
    "我喜欢在周末去公园散步",
    "明天下午三点开会",
    "她的猫叫小白",
    "東京の天気は晴れです",
    "彼は毎朝コーヒーを飲む",
    "我们下个月去上海旅行",
    "这个项目的截止日期是周五",
    "京都で紅葉を見ました",
)
# Questions of stop words only: nothing, or one word that is in no claim, becomes a term.
STOPWORD_QUESTIONS = (
    "what did I say about it?",
    "do you remember when we talked?",
    "what was that again?",
    "can you tell me what I said before?",
    "did I ever mention it to you?",
)
DEADLINE_SECONDS = 60.0  # generous: a slow turn must show up as latency, not as failing open


class TurnCorpus(Corpus):
    """The recall corpus with natural words and, every 25th claim, a CJK phrase."""

    def texts(self, count: int, salt: int) -> list[str]:
        base = super().texts(count, salt)
        rng = np.random.default_rng((self._seed, salt, 7))
        picks = rng.integers(len(NATURAL), size=(count, 2)).tolist()
        out = []
        for i, (sentence, (a, b)) in enumerate(zip(base, picks, strict=True)):
            text = f"{sentence} on {NATURAL[a]} with {NATURAL[b]}"
            if i % 25 == 0:
                text = f"{text} {CJK_PHRASES[(i // 25) % len(CJK_PHRASES)]}"
            out.append(text)
        return out

    def turn_queries(self, count: int, texts: Sequence[str]) -> list[tuple[str, str, np.ndarray]]:
        """(kind, text, query vector) cycled through the five kinds."""
        rng = np.random.default_rng((self._seed, 5))
        centres = self.centroids()
        out = []
        for q in range(count):
            kind = KINDS[q % len(KINDS)]
            topic = int(rng.integers(self.topics))
            if kind == "rare":
                word = self.vocab[int(rng.integers(10, 300))]
                text = f"What do you remember about {self.topic_words[topic]} and {word}?"
            elif kind == "common":
                first, second = (self.vocab[int(i)] for i in rng.integers(0, 3, size=2))
                natural = ("day", "old", "gold", "fold")[q % 4]
                text = f"tell me about {first} {second} {natural}"
            elif kind == "stopwords":
                text = STOPWORD_QUESTIONS[(q // len(KINDS)) % len(STOPWORD_QUESTIONS)]
            elif kind == "cjk":
                phrase = CJK_PHRASES[int(rng.integers(len(CJK_PHRASES)))]
                text = f"{phrase[: 2 + q % 5]}是什么？"
            else:
                paste: list[str] = []
                while sum(len(part) + 1 for part in paste) < 2_000:
                    paste.append(texts[int(rng.integers(len(texts)))])
                text = " ".join(paste)[:2_000]
            vector = centres[topic] + rng.standard_normal(recall.DIM, dtype=np.float32) / math.sqrt(
                recall.DIM
            )
            vector /= np.linalg.norm(vector)
            out.append((kind, text, vector))
        return out


class ModelQueryEmbedder(FixedQueryEmbedder):
    """The fixed vectors, but only after the default embedder has embedded the query text:
    the turn pays for the model as a real one would, and ranks on the synthetic vectors."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self._model = model

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        await self._model.embed(texts, purpose=purpose, deadline=deadline, cancel=cancel)
        return await super().embed(texts, purpose=purpose, deadline=deadline, cancel=cancel)


def _model() -> Any | None:
    try:
        from memory_adapters.local_embedder import MiniLMEmbedder

        model = MiniLMEmbedder()
        asyncio.run(
            model.embed(
                ["warm-up"], purpose=EmbeddingPurpose.QUERY, **recall._calls(DEADLINE_SECONDS)
            )
        )
        return model
    except Exception as exc:  # the model wheel is optional: the column is left out
        recall._say(f"  default embedder unavailable ({type(exc).__name__}): no 'included' column")
        return None


def _open(root: Path, registry: PluginRegistry, embedder: FixedQueryEmbedder) -> MemoryService:
    settings = MemorySettings(prepare_turn_deadline_ms=int(DEADLINE_SECONDS * 1000))
    return open_memory(
        root / "data",
        config=MemoryConfig(settings=settings),
        overrides={"embedding_provider": embedder},
        registry=registry,
    )


def _numpy_top_k(unit: np.ndarray, query: np.ndarray) -> np.ndarray:
    scores = unit @ query
    top = np.argpartition(scores, -NUMPY_TOP_K)[-NUMPY_TOP_K:]
    return top[np.argsort(-scores[top])]


async def _measure(
    root: Path,
    registry: PluginRegistry,
    *,
    embedders: dict[str, FixedQueryEmbedder],
    matrix: np.ndarray,
    queries: Sequence[tuple[str, str, np.ndarray]],
    bare: apsw.Connection,
) -> dict[str, Any]:
    """Ours (each embedder) / FTS5 / numpy alternately per query."""
    for embedder in embedders.values():
        for _, text, vector in queries:
            embedder.set(text, vector)
    services = {}
    open_s = {}
    for name, embedder in embedders.items():
        start = time.perf_counter()
        services[name] = _open(root / name, registry, embedder)
        open_s[name] = time.perf_counter() - start
    try:
        for name, memory in services.items():
            if not await memory.warm(AGENT):
                raise RuntimeError(f"{name}: the vector namespace did not warm")
        sessions = {name: memory.session(AGENT, "bench-turn") for name, memory in services.items()}

        def fts(terms: Sequence[str]) -> list[Any]:
            if not terms:
                return []
            return bare.execute(
                recall._BARE_SQL, (recall._match(terms), AGENT, FTS_LIMIT)
            ).fetchall()

        # One untimed round of each: first-touch costs are not per-query costs.
        for session in sessions.values():
            await session.prepare_turn("warm-up", queries[0][1])
        fts(search_terms(queries[0][1]))
        _numpy_top_k(matrix, queries[0][2])
        samples: dict[str, list[float]] = {name: [] for name in (*sessions, "fts5", "numpy")}
        by_kind: dict[str, dict[str, list[float]]] = {kind: {} for kind in KINDS}
        stages: dict[str, list[float]] = {name: [] for name in (*STAGES, "other", "total")}
        failed = 0
        for index, (kind, text, vector) in enumerate(queries):
            row: dict[str, float] = {}
            for name, session in sessions.items():
                start = time.perf_counter()
                turn = await session.prepare_turn(f"m{index}", text)
                row[name] = time.perf_counter() - start
                failed += turn.outcome == "failedOpen"
                if name == "excluded":
                    timings = turn.manifest.timings
                    if timings is not None:
                        timed = 0.0
                        for stage in STAGES:
                            stages[stage].append(getattr(timings, stage))
                            timed += getattr(timings, stage)
                        stages["other"].append(max(0.0, 1000 * row[name] - timed))
                        stages["total"].append(1000 * row[name])
            terms = search_terms(text)
            start = time.perf_counter()
            fts(terms)
            row["fts5"] = time.perf_counter() - start
            start = time.perf_counter()
            _numpy_top_k(matrix, vector)
            row["numpy"] = time.perf_counter() - start
            row["baseline"] = row["fts5"] + row["numpy"]
            for name, value in row.items():
                samples.setdefault(name, []).append(value)
                by_kind[kind].setdefault(name, []).append(value)
        for session in sessions.values():
            await session.drain()
    finally:
        for memory in services.values():
            await memory.aclose()
    return {
        "samples": samples,
        "by_kind": by_kind,
        "stages": stages,
        "failed_open": failed,
        "open_s": open_s,
    }


def _build(
    root: Path,
    registry: PluginRegistry,
    *,
    embedder: FixedQueryEmbedder,
    corpus: TurnCorpus,
    count: int,
    noise_rows: int,
    matrix: np.ndarray,
    tokenizer: str,
) -> dict[str, Any]:
    """The store's data dir (`root/excluded`) and the bare FTS5 file (`root/bare.sqlite3`);
    the build timings, also written to `root/built.json` last, as the mark of a whole build."""
    build = asyncio.run(
        recall._build(
            root / "excluded",
            registry,
            embedder=embedder,
            corpus=corpus,
            count=count,
            noise_rows=noise_rows,
            matrix=matrix,
        )
    )
    groups: list[tuple[str, Sequence[str]]] = [(AGENT, build.pop("texts"))]
    groups += [
        (f"bench-other-{salt - 1}", corpus.texts(noise_rows, salt=salt))
        for salt in build.pop("noise_texts_salts")
    ]
    build.pop("ids")
    bare, bare_s = recall._bare_fts(root / "bare.sqlite3", tokenizer, groups)
    bare.close()
    del groups
    gc.collect()
    recall._say(f"  bare FTS5 ({tokenizer}) built in {bare_s:.1f} s")
    build["bare_fts5_build_s"] = bare_s
    (root / _BUILT).write_text(json.dumps(build), encoding="utf-8")
    return build


def bench_size(
    count: int,
    *,
    queries: int,
    noise_rows: int,
    registry: PluginRegistry,
    model: Any | None,
    seed: int,
    cache: Path | None = None,
) -> dict[str, Any]:
    topics = max(1, count // recall.CLUSTER)
    corpus = TurnCorpus(seed, topics)
    matrix = corpus.vectors(count)
    embedder = FixedQueryEmbedder()
    probe = apsw.Connection(":memory:")
    tokenizer = probe_tokenizer(probe)
    probe.close()
    with tempfile.TemporaryDirectory(prefix="bench-turn-") as tmp:
        root = Path(tmp)
        built = cache / f"turn-{count}-{noise_rows}-{seed}" if cache is not None else root
        if (built / _BUILT).exists():
            build = json.loads((built / _BUILT).read_text(encoding="utf-8"))
            recall._say(f"  reusing the data built in {built}")
        else:
            if built is not root:
                shutil.rmtree(built, ignore_errors=True)  # an interrupted build starts over
            built.mkdir(parents=True, exist_ok=True)
            build = _build(
                built,
                registry,
                embedder=embedder,
                corpus=corpus,
                count=count,
                noise_rows=noise_rows,
                matrix=matrix,
                tokenizer=tokenizer,
            )
        if built is not root:
            # Each run measures a fresh copy: turns write anchors, access counts and the
            # stored working projection, which would make a second run on the same files a
            # different experiment.
            shutil.copytree(built / "excluded", root / "excluded")
            shutil.copy2(built / "bare.sqlite3", root / "bare.sqlite3")
        texts = corpus.texts(count, salt=0)
        embedders: dict[str, FixedQueryEmbedder] = {"excluded": embedder}
        if model is not None:
            # A copy of the data dir: a second service on the same one would wait on its lock.
            shutil.copytree(root / "excluded", root / "included")
            embedders["included"] = ModelQueryEmbedder(model)
        bare = apsw.Connection(str(root / "bare.sqlite3"))
        try:
            measured = asyncio.run(
                _measure(
                    root,
                    registry,
                    embedders=embedders,
                    matrix=matrix,
                    queries=corpus.turn_queries(queries, texts),
                    bare=bare,
                )
            )
        finally:
            bare.close()
    del matrix
    gc.collect()
    samples = measured["samples"]
    result: dict[str, Any] = {
        "n": count,
        "noise_agents": recall.NOISE_AGENTS,
        "noise_rows_per_agent": noise_rows,
        "store_rows": count + recall.NOISE_AGENTS * noise_rows,
        "queries": queries,
        "fts_tokenizer": tokenizer,
        "latency": {name: recall._ms(values) for name, values in samples.items()},
        "by_kind_p50_ms": {
            kind: {name: 1000 * statistics.median(values) for name, values in columns.items()}
            for kind, columns in measured["by_kind"].items()
            if columns
        },
        "stages_p50_ms": {
            name: statistics.median(values) for name, values in measured["stages"].items() if values
        },
        "failed_open": measured["failed_open"],
        "build": {**build, "open_s": measured["open_s"], "cached": cache is not None},
    }
    base = result["latency"]["baseline"]
    result["ratios"] = {
        f"{name}_vs_baseline": {
            "p50": result["latency"][name]["p50_ms"] / base["p50_ms"],
            "p95": result["latency"][name]["p95_ms"] / base["p95_ms"],
        }
        for name in ("excluded", "included")
        if name in result["latency"]
    }
    return result


def run(
    sizes: Sequence[int],
    *,
    quick: bool = False,
    queries: int | None = None,
    seed: int = 20261201,
    cache: Path | None = None,
    model: bool = True,
) -> dict[str, Any]:
    started = time.perf_counter()
    load_before = os.getloadavg()
    registry = load_plugins(strict=True, distributions={"agent-memory"}).registry
    embedder_model = _model() if model else None
    results = []
    for count in sizes:
        noise_rows = QUICK_NOISE_ROWS if quick else NOISE_ROWS
        per_size = queries if queries is not None else (50 if quick else 100)
        recall._say(
            f"N = {count:,}: {per_size} queries, noise {recall.NOISE_AGENTS} × {noise_rows:,}"
        )
        size_start = time.perf_counter()
        result = bench_size(
            count,
            queries=per_size,
            noise_rows=noise_rows,
            registry=registry,
            model=embedder_model,
            seed=seed,
            cache=cache,
        )
        result["seconds"] = time.perf_counter() - size_start
        results.append(result)
    return {
        "benchmark": "turn",
        "when": recall.datetime.now(recall.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "sqlite": apsw.sqlite_lib_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
        },
        "settings": {
            "quick": quick,
            "seed": seed,
            "fts_limit": FTS_LIMIT,
            "numpy_top_k": NUMPY_TOP_K,
            "query_mix": list(KINDS),
            "model": "local-minilm" if embedder_model is not None else None,
        },
        "total_seconds": time.perf_counter() - started,
        "results": results,
    }


def report(document: dict[str, Any], write: Callable[[str], None] = print) -> None:
    write("prepare_turn vs bare FTS5 + numpy exact top-10 (same data, same run); ms p50 [p95]")
    columns = ("excluded", "included", "fts5", "numpy", "baseline")
    write(
        f"{'N':>9} {'rows':>9} "
        + " ".join(f"{name:>17}" for name in columns)
        + f" {'excl/base p50':>13} {'p95':>6} {'incl/base p50':>13} {'p95':>6}"
    )
    for r in document["results"]:
        latency = r["latency"]
        cells = []
        for name in columns:
            stats = latency.get(name)
            cells.append(
                (f"{stats['p50_ms']:.2f} [{stats['p95_ms']:.2f}]" if stats else "—").rjust(17)
            )
        ratios = []
        for name in ("excluded", "included"):
            ratio = r["ratios"].get(f"{name}_vs_baseline")
            ratios.append(
                f"{ratio['p50']:>13.2f} {ratio['p95']:>6.2f}" if ratio else f"{'—':>13} {'—':>6}"
            )
        write(f"{r['n']:>9,} {r['store_rows']:>9,} " + " ".join(cells) + " " + " ".join(ratios))
    write("")
    write("p50 ms by query kind (excluded | baseline)")
    for r in document["results"]:
        parts = [
            f"{kind} {cols['excluded']:.1f} | {cols['baseline']:.1f}"
            for kind, cols in r["by_kind_p50_ms"].items()
        ]
        write(f"{r['n']:>9,}  " + "; ".join(parts))
    write("")
    names = (*STAGES, "other", "total")
    write("stage breakdown of the excluded turn, p50 ms (other = the turn minus retrieval stages)")
    write(f"{'N':>9} " + " ".join(f"{name[:10]:>10}" for name in names) + f" {'failedOpen':>10}")
    for r in document["results"]:
        stages = r["stages_p50_ms"]
        write(
            f"{r['n']:>9,} "
            + " ".join(f"{stages.get(name, 0.0):>10.2f}" for name in names)
            + f" {r['failed_open']:>10}"
        )
    machine = document["machine"]
    write(
        f"load {machine['loadavg_before'][0]:.1f} → {machine['loadavg_after'][0]:.1f}; "
        f"total {document['total_seconds']:.0f} s"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.turn",
        description="prepare_turn vs bare FTS5 + numpy exact scan on the same data.",
    )
    parser.add_argument("--quick", action="store_true", help="10k only, 10 × 1,000 noise")
    parser.add_argument("--sizes", help="comma-separated claim counts per agent")
    parser.add_argument("--queries", type=int, help="queries per size (default 100; 50 quick)")
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"default: {RESULTS}")
    parser.add_argument(
        "--cache",
        type=Path,
        help="build each size's data once into this directory and measure a copy of it",
    )
    parser.add_argument(
        "--no-model", action="store_true", help="leave out the 'included' (MiniLM) column"
    )
    args = parser.parse_args(argv)
    if args.sizes:
        try:
            sizes = [int(size) for size in args.sizes.split(",")]
        except ValueError:
            parser.error(f"--sizes: comma-separated integers, got {args.sizes!r}")
        if any(size < recall.CLUSTER for size in sizes):
            parser.error(f"--sizes: each size must be at least {recall.CLUSTER}")
    else:
        sizes = list(QUICK_SIZES if args.quick else SIZES)
    if args.queries is not None and args.queries < 1:
        parser.error("--queries: at least 1")
    document = run(
        sizes, quick=args.quick, queries=args.queries, cache=args.cache, model=not args.no_model
    )
    report(document)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
