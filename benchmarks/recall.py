"""Recall benchmark: our full recall path next to its plain baselines, in one run (R-BEYOND-3).

    python -m benchmarks.recall                    # 10k, 100k and 1M claims
    python -m benchmarks.recall --quick            # 10k and 100k, less noise, smaller probe
    python -m benchmarks.recall --sizes 2000 --queries 3 --json out.json

Per size N, one agent gets N claims through the real SQLite store's bulk path
(`ApswClaimStore.insert_many`, 1,000 per transaction) next to 10 other agents' rows as noise
(10 × min(N, 10,000) rows; 10 × min(N, 1,000) with `--quick`), and N vectors in the DuckDB
vector store (384-d, L2-normalised). The vectors are synthetic — clusters of ~100 around
random centroids, one cluster per topic word of the claim text — because embedding 1M texts
with MiniLM takes about an hour; the query embedding is a fixed vector per query text, served
by a tiny `EmbeddingProvider` registered as a plugin object ("bench-fixed"). So the measured
path is everything except the model: keywords, the FTS search with owner and scope predicates,
the provider gateway, the vector scan under the ready certificate, re-validation against the
authoritative rows, refill, scoring and fusion, and access accounting. The claims' embedding
state is set to ready in 10,000-row transactions with the store's own `mark_embedding`
statement (the drain runs it one claim per transaction, ~5k/s: 3 minutes at 1M). The service
is then closed and reopened, like a fresh process, and the agent's vector namespace warmed.

Then, query by query and alternately (so a noisy neighbour slows all alike), it times:

(a) ours: `RetrievalService.retrieve`, purpose recall, top-k 6 — median and p95;
(b) numpy: bare exact top-10 over the same normalised matrix (`X @ q`, argpartition, sort),
    timed in the same loop; and again back to back ("numpy hot"), because between queries
    OpenBLAS's threads fall asleep and the first call after a pause pays their wake-up
    (about 1 ms idle, ~10 ms on a loaded box) — as does our scan;
(c) FTS5: bare `MATCH` on a plain apsw table of the same rows (all agents, the same
    tokenizer as the store), filtered to the agent by a join, with the same terms
    (`search_terms` of the query, OR-ed) and the same LIMIT as our first FTS round;
(d) the bound: bytes of one exact scan of N × 384 float32 ÷ copy bandwidth measured in this
    run (`benchmarks.vectors.measure_bandwidth`).

Ratios (ours / numpy, ours / bound, ours / FTS5, ours / (numpy + FTS5)) use medians of this
run only. The stage breakdown comes from the retrieval diagnostics; "other" is the total
minus the timed stages: the FTS search and its re-validation, the directive read and the
access-accounting write. Results: a table on stdout, progress on stderr, JSON to
`benchmarks/results/recall.json`. Memory at 1M: ~1.5 GB each for our numpy copy and the
store's resident matrix, plus transients while generating and warming (peak not measured;
well inside 24 GB). `--quick` peaks at ~0.8 GB RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import duckdb
import numpy as np

# `_say` keeps its old name here: turn.py and cold_start.py call it as recall._say.
from benchmarks.support import latency_ms, load_line, machine, parse_sizes, write_json
from benchmarks.support import say as _say
from benchmarks.vectors import measure_bandwidth
from memory_adapters.clocks import MonotonicClock
from memory_adapters.sql_claims import Session, bookkeeping
from memory_adapters.sqlite_store.connection import write_transaction
from memory_adapters.sqlite_store.dialect import SQLITE
from memory_adapters.sqlite_store.migrations import probe_tokenizer
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.directives import DirectiveStatus
from memory_core.domain.scope import ScopeContext, ScopeFilter
from memory_core.ports.claims import MatchMode
from memory_core.ports.providers import EmbeddingPurpose
from memory_core.services.memory import MemoryService
from memory_core.services.read.keywords import search_terms
from memory_core.services.read.retrieval.service import (
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalResult,
)
from memory_plugins.bootstrap import open_memory
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry

__all__ = ["FixedQueryEmbedder", "main", "run"]

DIM = 384
TOP_K = 6  # our recall's top-k (the default setting)
NUMPY_TOP_K = 10
CLUSTER = 100  # claims per topic (and per vector cluster)
AGENT = "bench-target"
NOISE_AGENTS = 10
INSERT_BATCH = 1_000
MARK_BATCH = 10_000
VECTOR_BATCH = 50_000
VOCABULARY = 3_000
DEADLINE_SECONDS = 60.0  # generous: a slow scan must show up as latency, not a degradation
EMBEDDER = "bench-fixed"
SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (10_000, 100_000)
RESULTS = Path(__file__).with_name("results") / "recall.json"
STAGES = ("keywords", "query_embedding", "vector", "revalidation", "assembly")
_BARE_SQL = (
    "SELECT c.id, bm25(claims_fts) AS r FROM claims_fts JOIN claims c ON c.id = claims_fts.rowid "
    "WHERE claims_fts MATCH ? AND c.agent_id = ? ORDER BY r LIMIT ?"
)


# --- the query embedding: a fixed vector per text, no model --------------------------------
class FixedQueryEmbedder:
    """`EmbeddingProvider` whose vectors are set by the benchmark: the query vector of each
    query text, a fixed unit vector for anything else (the gateway's warm-up text)."""

    def __init__(self, dim: int = DIM) -> None:
        self._dim = dim
        self._vectors: dict[str, list[float]] = {}
        self._other = [1.0] + [0.0] * (dim - 1)

    @property
    def provider_id(self) -> str:
        return EMBEDDER

    @property
    def model_id(self) -> str:
        return "synthetic-clusters-v1"

    def set(self, text: str, vector: np.ndarray) -> None:
        self._vectors[text] = [float(x) for x in vector]

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        cancel.raise_if_cancelled()
        deadline.raise_if_expired("bench-fixed dimensions")
        return self._dim

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        cancel.raise_if_cancelled()
        deadline.raise_if_expired("bench-fixed embed")
        return [self._vectors.get(text, self._other) for text in texts]

    async def aclose(self) -> None:
        """Nothing to release."""


def _open(root: Path, registry: PluginRegistry, embedder: FixedQueryEmbedder) -> MemoryService:
    # The fixed embedder is handed in directly: no plugin class exists only to inject it.
    return open_memory(root / "data", overrides={"embedding_provider": embedder}, registry=registry)


# --- synthetic data -------------------------------------------------------------------------
def _words(rng: np.random.Generator, count: int, exclude: set[str]) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: dict[str, None] = {}
    while len(words) < count:
        length = int(rng.integers(5, 11))
        word = "".join(rng.choice(letters, size=length))
        if word not in exclude:
            words.setdefault(word, None)
    return list(words)


class Corpus:
    """Claim texts with topic words, and vectors clustered by the same topics."""

    def __init__(self, seed: int, topics: int) -> None:
        rng = np.random.default_rng(seed)
        self.vocab = _words(rng, VOCABULARY, set())
        self.topic_words = _words(rng, topics, set(self.vocab))
        self.topics = topics
        self._seed = seed

    def texts(self, count: int, salt: int) -> list[str]:
        """`count` unique sentences: the topic word of claim i (topic i mod topics), then nine
        Zipf-drawn background words, then a serial number."""
        rng = np.random.default_rng((self._seed, salt))
        ranks = np.minimum(rng.zipf(1.2, size=(count, 9)) - 1, len(self.vocab) - 1)
        vocab = self.vocab
        topic_words = self.topic_words
        topics = self.topics
        return [
            f"{topic_words[i % topics]} {' '.join(vocab[r] for r in row)} note {salt}-{i}"
            for i, row in enumerate(ranks.tolist())
        ]

    def centroids(self) -> np.ndarray:
        rng = np.random.default_rng((self._seed, 1))
        centres = rng.standard_normal((self.topics, DIM), dtype=np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        return centres

    def vectors(self, count: int) -> np.ndarray:
        """Unit rows: each its topic's centroid plus noise of the same norm (a cluster member
        has cosine ~0.5 with its topic's queries, ~0 with the rest)."""
        rng = np.random.default_rng((self._seed, 2))
        centres = self.centroids()
        out = np.empty((count, DIM), dtype=np.float32)
        for low in range(0, count, 100_000):  # chunked: the temporaries stay small
            high = min(count, low + 100_000)
            block = rng.standard_normal((high - low, DIM), dtype=np.float32)
            block *= 1 / math.sqrt(DIM)
            block += centres[np.arange(low, high) % self.topics]
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            out[low:high] = block
        return out

    def queries(self, count: int) -> list[tuple[str, np.ndarray]]:
        """Questions naming one topic word and one mid-frequency word, with a query vector near
        that topic's centroid (a new sample, not a stored vector)."""
        rng = np.random.default_rng((self._seed, 3))
        centres = self.centroids()
        out = []
        for q in range(count):
            topic = int(rng.integers(self.topics))
            word = self.vocab[int(rng.integers(10, 300))]
            vector = centres[topic] + rng.standard_normal(DIM, dtype=np.float32) / math.sqrt(DIM)
            vector /= np.linalg.norm(vector)
            text = f"What do you remember about {self.topic_words[topic]} and {word}? ({q})"
            out.append((text, vector.astype(np.float32)))
        return out


# --- helpers ----------------------------------------------------------------------------------
def _ms(samples: Sequence[float]) -> dict[str, float]:
    # turn.py summarises its latencies with this too, so both read p95 by the same rank rule.
    return latency_ms(samples, ("min", "p50", "p95"), rank="nearest")


def _numpy_top_k(unit: np.ndarray, query: np.ndarray) -> np.ndarray:
    scores = unit @ query
    top = np.argpartition(scores, -NUMPY_TOP_K)[-NUMPY_TOP_K:]
    return top[np.argsort(-scores[top])]


_CLOCK = MonotonicClock()  # time.monotonic, like the "system" clock plugin's InfraClock


def _calls(seconds: float = 3_600) -> dict[str, Any]:
    return {"deadline": Deadline.after(_CLOCK, seconds), "cancel": CancellationToken()}


# --- building one size ------------------------------------------------------------------------
def _insert(
    memory: MemoryService, agent: str, texts: Sequence[str], now: datetime
) -> tuple[list[tuple[str, int]], float]:
    """Claims through the store's bulk path; (id, revision) in text order, and seconds."""
    ids: list[tuple[str, int]] = []
    start = time.perf_counter()
    for low in range(0, len(texts), INSERT_BATCH):
        drafts = [
            ClaimDraft(agent_id=agent, kind="semantic", content=text)
            for text in texts[low : low + INSERT_BATCH]
        ]
        for outcome in memory.store.insert_many(drafts, origin=WriteOrigin.EXTRACTION, now=now):
            assert outcome.claim is not None, outcome.status
            ids.append((outcome.claim.id, outcome.claim.revision))
    return ids, time.perf_counter() - start


async def _build(
    root: Path,
    registry: PluginRegistry,
    *,
    embedder: FixedQueryEmbedder,
    corpus: Corpus,
    count: int,
    noise_rows: int,
    matrix: np.ndarray,
) -> dict[str, Any]:
    """Populate the store and the vector namespace; returns build timings."""
    now = datetime.now(UTC)
    memory = _open(root, registry, embedder)
    try:
        texts = corpus.texts(count, salt=0)
        ids, insert_s = _insert(memory, AGENT, texts, now)
        _say(f"  {count:,} claims inserted in {insert_s:.1f} s")
        noise_s = 0.0
        for other in range(NOISE_AGENTS if noise_rows else 0):
            _, seconds = _insert(
                memory, f"bench-other-{other}", corpus.texts(noise_rows, salt=other + 1), now
            )
            noise_s += seconds
        if noise_rows:
            _say(f"  {NOISE_AGENTS} × {noise_rows:,} noise claims inserted in {noise_s:.1f} s")
        identity = await memory.gateway.identity(agent_id=AGENT, **_calls())
        vectors = memory.index.vectors
        assert vectors is not None
        start = time.perf_counter()
        for low in range(0, count, VECTOR_BATCH):
            batch = {
                claim_id: matrix[low + offset]
                for offset, (claim_id, _) in enumerate(ids[low : low + VECTOR_BATCH])
            }
            await vectors.upsert(AGENT, identity, batch, **_calls())
        vector_s = time.perf_counter() - start
        _say(f"  {count:,} vectors written in {vector_s:.1f} s")
        # The drain's own statement, 10,000 claims per transaction instead of one.
        conn = memory.store._conn  # type: ignore[attr-defined]
        start = time.perf_counter()
        marked = 0
        for low in range(0, count, MARK_BATCH):
            with write_transaction(conn) as tx:
                for claim_id, revision in ids[low : low + MARK_BATCH]:
                    marked += bookkeeping.mark_embedding(
                        Session(tx, SQLITE),
                        AGENT,
                        claim_id,
                        expected_revision=revision,
                        identity=identity,
                        ready=True,
                    )
        mark_s = time.perf_counter() - start
        assert marked == count, (marked, count)
        return {
            "ids": [claim_id for claim_id, _ in ids],
            "texts": texts,
            "noise_texts_salts": list(range(1, NOISE_AGENTS + 1)) if noise_rows else [],
            "insert_rows_per_s": count / insert_s,
            "noise_insert_rows_per_s": (NOISE_AGENTS * noise_rows / noise_s) if noise_s else None,
            "vector_write_rows_per_s": count / vector_s,
            "mark_ready_s": mark_s,
        }
    finally:
        await memory.aclose()


def _bare_fts(
    path: Path, tokenizer: str, rows: Sequence[tuple[str, Sequence[str]]]
) -> tuple[apsw.Connection, float]:
    """A plain FTS5 table over the same rows as the store: (agent, texts) groups."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE claims (id INTEGER PRIMARY KEY, agent_id TEXT, content TEXT)")
    conn.execute("CREATE INDEX claims_agent ON claims (agent_id)")
    conn.execute(
        "CREATE VIRTUAL TABLE claims_fts USING fts5("
        f"content, content='claims', content_rowid='id', tokenize='{tokenizer}')"
    )
    start = time.perf_counter()
    with conn:
        for agent, texts in rows:
            conn.executemany(
                "INSERT INTO claims (agent_id, content) VALUES (?, ?)",
                ((agent, text) for text in texts),
            )
        conn.execute("INSERT INTO claims_fts (claims_fts) VALUES ('rebuild')")
    return conn, time.perf_counter() - start


def _match(terms: Sequence[str]) -> str:
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


async def _measure(
    root: Path,
    registry: PluginRegistry,
    *,
    embedder: FixedQueryEmbedder,
    matrix: np.ndarray,
    queries: Sequence[tuple[str, np.ndarray]],
    bare: apsw.Connection,
    fts_limit: int,
    row_of: dict[str, int],
) -> dict[str, Any]:
    """A cold open, the warm-up, then ours / numpy / FTS5 alternately per query."""
    for text, vector in queries:
        embedder.set(text, vector)
    start = time.perf_counter()
    memory = _open(root, registry, embedder)
    open_s = time.perf_counter() - start
    try:
        start = time.perf_counter()
        ready = await memory.warm(AGENT)
        warm_s = time.perf_counter() - start
        if not ready:
            raise RuntimeError("the vector namespace did not warm: no ready certificate")

        async def ours(text: str) -> RetrievalResult:
            return await memory.retrieval.retrieve(
                RetrievalRequest(
                    agent_id=AGENT,
                    query=text,
                    purpose=RetrievalPurpose.RECALL,
                    context=ScopeContext(),
                    top_k=TOP_K,
                ),
                **_calls(DEADLINE_SECONDS),
            )

        def fts(terms: Sequence[str]) -> list[Any]:
            return bare.execute(_BARE_SQL, (_match(terms), AGENT, fts_limit)).fetchall()

        # One untimed round of each: first-touch costs are not per-query costs.
        await ours(queries[0][0])
        _numpy_top_k(matrix, queries[0][1])
        fts(search_terms(queries[0][0]))
        samples: dict[str, list[float]] = {"ours": [], "numpy": [], "numpy_hot": [], "fts5": []}
        stages: dict[str, list[float]] = {name: [] for name in (*STAGES, "other", "total")}
        counts: dict[str, list[int]] = {
            "fts_candidates": [],
            "vector_candidates": [],
            "revalidated": [],
            "refills": [],
            "items": [],
            "bare_fts5_hits": [],
            "items_in_numpy_top10": [],
        }
        degraded = 0
        for text, vector in queries:
            terms = search_terms(text)
            start = time.perf_counter()
            result = await ours(text)
            samples["ours"].append(time.perf_counter() - start)
            start = time.perf_counter()
            top = _numpy_top_k(matrix, vector)
            samples["numpy"].append(time.perf_counter() - start)
            start = time.perf_counter()
            hits = fts(terms)
            samples["fts5"].append(time.perf_counter() - start)

            diagnostics = result.diagnostics
            timings = diagnostics.timings
            timed = 0.0
            for name in STAGES:
                value = getattr(timings, name)
                stages[name].append(value)
                timed += value
            stages["other"].append(max(0.0, timings.total - timed))
            stages["total"].append(timings.total)
            counts["fts_candidates"].append(diagnostics.fts_candidates)
            counts["vector_candidates"].append(diagnostics.vector_candidates)
            counts["revalidated"].append(diagnostics.revalidated)
            counts["refills"].append(diagnostics.refills)
            counts["items"].append(len(result.items))
            counts["bare_fts5_hits"].append(len(hits))
            # A sanity check that the vector path took part: our items among numpy's top-10.
            nearest = set(top.tolist())
            counts["items_in_numpy_top10"].append(
                sum(1 for item in result.items if row_of.get(item.claim.id, -1) in nearest)
            )
            degraded += bool(result.degradations)
        probes = _probe_other(memory, queries, fts_limit)
        # numpy again, back to back: BLAS threads that have gone to sleep between queries
        # cost a wake-up in the interleaved loop above (as they do in ours); this is the
        # scan alone with them awake.
        _numpy_top_k(matrix, queries[0][1])
        for _, vector in queries:
            start = time.perf_counter()
            _numpy_top_k(matrix, vector)
            samples["numpy_hot"].append(time.perf_counter() - start)
    finally:
        await memory.aclose()
    return {
        "samples": samples,
        "stages": stages,
        "counts": counts,
        "degraded_queries": degraded,
        "probes": probes,
        "open_s": open_s,
        "warm_s": warm_s,
    }


def _probe_other(
    memory: MemoryService, queries: Sequence[tuple[str, np.ndarray]], fts_limit: int
) -> dict[str, float]:
    """What the diagnostics leave untimed ("other"), each piece called alone on the same
    store right after the main loop: the FTS search and its re-validation, the clear-fence
    and directive reads, and the access-accounting write (one fsync'd transaction)."""
    store = memory.store
    scope = ScopeFilter.from_context(ScopeContext())
    samples: dict[str, list[float]] = {
        "fts_search": [],
        "fts_revalidation": [],
        "fence_and_directives": [],
        "access": [],
    }
    now = datetime.now(UTC)
    for text, _ in queries:
        terms = search_terms(text)
        start = time.perf_counter()
        hits = store.search_fts(
            AGENT, terms, scope_filter=scope, limit=fts_limit, match_mode=MatchMode.ANY
        )
        samples["fts_search"].append(time.perf_counter() - start)
        start = time.perf_counter()
        store.list_applicable_by_ids(AGENT, [hit.claim_id for hit in hits], scope_filter=scope)
        samples["fts_revalidation"].append(time.perf_counter() - start)
        start = time.perf_counter()
        store.pending_clears()
        store.list_directives(AGENT, status=DirectiveStatus.ACTIVE)
        samples["fence_and_directives"].append(time.perf_counter() - start)
        start = time.perf_counter()
        store.record_access(AGENT, [hit.claim_id for hit in hits[:TOP_K]], now=now)
        samples["access"].append(time.perf_counter() - start)
    return {name: 1000 * statistics.median(values) for name, values in samples.items()}


def bench_size(
    count: int,
    *,
    queries: int,
    noise_rows: int,
    registry: PluginRegistry,
    embedder: FixedQueryEmbedder,
    seed: int,
) -> dict[str, Any]:
    """Every measurement for one size, in its own temporary directory."""
    topics = max(1, count // CLUSTER)
    corpus = Corpus(seed, topics)
    matrix = corpus.vectors(count)
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        root = Path(tmp)
        build = asyncio.run(
            _build(
                root,
                registry,
                embedder=embedder,
                corpus=corpus,
                count=count,
                noise_rows=noise_rows,
                matrix=matrix,
            )
        )
        row_of = {claim_id: row for row, claim_id in enumerate(build.pop("ids"))}
        texts = build.pop("texts")
        groups: list[tuple[str, Sequence[str]]] = [(AGENT, texts)]
        groups += [
            (f"bench-other-{salt - 1}", corpus.texts(noise_rows, salt=salt))
            for salt in build.pop("noise_texts_salts")
        ]
        del texts
        probe = apsw.Connection(":memory:")
        tokenizer = probe_tokenizer(probe)
        probe.close()
        bare, bare_s = _bare_fts(root / "bare.sqlite3", tokenizer, groups)
        del groups
        gc.collect()
        _say(f"  bare FTS5 ({tokenizer}) built in {bare_s:.1f} s")
        # Our first FTS round reads top-k × 4 candidates (recall is `current` mode).
        fts_limit = TOP_K * 4
        try:
            measured = asyncio.run(
                _measure(
                    root,
                    registry,
                    embedder=embedder,
                    matrix=matrix,
                    queries=corpus.queries(queries),
                    bare=bare,
                    fts_limit=fts_limit,
                    row_of=row_of,
                )
            )
        finally:
            bare.close()
        sqlite_mb = (root / "data" / "memory.sqlite3").stat().st_size / 1e6
    del matrix, row_of
    gc.collect()
    samples = measured["samples"]
    return {
        "n": count,
        "dim": DIM,
        "topics": topics,
        "noise_agents": NOISE_AGENTS if noise_rows else 0,
        "noise_rows_per_agent": noise_rows,
        "store_rows": count + (NOISE_AGENTS * noise_rows if noise_rows else 0),
        "bytes_scanned": count * DIM * 4,
        "queries": queries,
        "ours": _ms(samples["ours"]),
        "numpy": _ms(samples["numpy"]),
        "numpy_hot": _ms(samples["numpy_hot"]),
        "bare_fts5": _ms(samples["fts5"]),
        "bare_fts5_limit": fts_limit,
        "fts_tokenizer": tokenizer,
        "stages_p50_ms": {
            name: statistics.median(values) for name, values in measured["stages"].items()
        },
        "counts_median": {
            name: statistics.median(values) for name, values in measured["counts"].items()
        },
        "degraded_queries": measured["degraded_queries"],
        "other_probes_p50_ms": measured["probes"],
        "build": {
            **build,
            "bare_fts5_build_s": bare_s,
            "open_s": measured["open_s"],
            "warm_s": measured["warm_s"],
            "sqlite_file_mb": sqlite_mb,
        },
    }


def run(
    sizes: Sequence[int],
    *,
    quick: bool = False,
    queries: int | None = None,
    seed: int = 20261130,
) -> dict[str, Any]:
    """The whole benchmark; returns the JSON document (also printed as tables)."""
    started = time.perf_counter()
    load_before = os.getloadavg()
    _say("measuring copy bandwidth ...")
    bandwidth = measure_bandwidth(256 if quick else 1024)
    embedder = FixedQueryEmbedder()
    registry = load_plugins(strict=True, distributions={"agent-memory"}).registry
    results = []
    for count in sizes:
        noise_rows = min(count, 1_000 if quick else 10_000)
        per_size = queries if queries is not None else (30 if quick or count > 100_000 else 50)
        _say(f"N = {count:,}: {per_size} queries, noise {NOISE_AGENTS} × {noise_rows:,}")
        size_start = time.perf_counter()
        result = bench_size(
            count,
            queries=per_size,
            noise_rows=noise_rows,
            registry=registry,
            embedder=embedder,
            seed=seed,
        )
        result["seconds"] = time.perf_counter() - size_start
        bound_ms = 1000 * result["bytes_scanned"] / (bandwidth["copy_gb_s"] * 1e9)
        result["bandwidth_bound_ms"] = bound_ms
        ours = result["ours"]["p50_ms"]
        numpy_ms = result["numpy"]["p50_ms"]
        fts_ms = result["bare_fts5"]["p50_ms"]
        result["ratios"] = {
            "ours_vs_numpy": ours / numpy_ms,
            "ours_vs_numpy_hot": ours / result["numpy_hot"]["p50_ms"],
            "ours_vs_bound": ours / bound_ms,
            "ours_vs_bare_fts5": ours / fts_ms,
            "ours_vs_numpy_plus_fts5": ours / (numpy_ms + fts_ms),
            "numpy_vs_bound": numpy_ms / bound_ms,
            "numpy_hot_vs_bound": result["numpy_hot"]["p50_ms"] / bound_ms,
        }
        results.append(result)
    return {
        "benchmark": "recall",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(
            load_before,
            numpy=np.__version__,
            duckdb=duckdb.__version__,
            apsw=apsw.apswversion(),
            sqlite=apsw.sqlite_lib_version(),
        ),
        "settings": {
            "purpose": RetrievalPurpose.RECALL.value,
            "top_k": TOP_K,
            "numpy_top_k": NUMPY_TOP_K,
            "quick": quick,
            "seed": seed,
            "vectors": "synthetic: clusters of ~100 unit vectors, 384-d, one per topic word",
            "query_embedding": f"fixed vector per query text ({EMBEDDER}, an override), no model",
        },
        "bandwidth": bandwidth,
        "total_seconds": time.perf_counter() - started,
        "results": results,
    }


# --- report ---------------------------------------------------------------------------------
def report(document: dict[str, Any], write: Callable[[str], None] = print) -> None:
    """The three tables: latency and ratios, stage breakdown, build costs."""
    write(
        f"recall top-{document['settings']['top_k']} (purpose recall) vs bare baselines; "
        "ms per query, p50 [p95]; bound = one exact scan's bytes ÷ copy bandwidth"
    )
    write(
        f"{'N':>9} {'rows':>9} {'ours':>16} {'numpy':>15} {'numpy hot':>15} {'FTS5':>15} "
        f"{'bound':>8} {'ours/np':>7} {'/np hot':>7} {'ours/bnd':>8} {'ours/FTS':>8} "
        f"{'ours/(np+FTS)':>13}"
    )
    for r in document["results"]:
        ratios = r["ratios"]

        def cell(stats: dict[str, float], width: int) -> str:
            return f"{stats['p50_ms']:.2f} [{stats['p95_ms']:.2f}]".rjust(width)

        write(
            f"{r['n']:>9,} {r['store_rows']:>9,} {cell(r['ours'], 16)} {cell(r['numpy'], 15)} "
            f"{cell(r['numpy_hot'], 15)} {cell(r['bare_fts5'], 15)} "
            f"{r['bandwidth_bound_ms']:>7.2f}m {ratios['ours_vs_numpy']:>7.2f} "
            f"{ratios['ours_vs_numpy_hot']:>7.2f} {ratios['ours_vs_bound']:>8.2f} "
            f"{ratios['ours_vs_bare_fts5']:>8.2f} {ratios['ours_vs_numpy_plus_fts5']:>13.2f}"
        )
    write("")
    write(
        "stage breakdown, p50 ms (retrieval diagnostics; other = total - timed stages), and "
        "the pieces of 'other' called alone: FTS search, its re-validation, fence + directive "
        "reads, access-accounting write"
    )
    names = (*STAGES, "other", "total")
    probes = ("fts_search", "fts_revalidation", "fence_and_directives", "access")
    write(
        f"{'N':>9} "
        + " ".join(f"{name[:10]:>10}" for name in names)
        + " |"
        + " ".join(f"{name[:10]:>10}" for name in probes)
        + f" {'degraded':>8}"
    )
    for r in document["results"]:
        stages, pieces = r["stages_p50_ms"], r["other_probes_p50_ms"]
        write(
            f"{r['n']:>9,} "
            + " ".join(f"{stages[name]:>10.3f}" for name in names)
            + " |"
            + " ".join(f"{pieces[name]:>10.3f}" for name in probes)
            + f" {r['degraded_queries']:>8}"
        )
    write("")
    write("candidates (median per query) and build")
    write(
        f"{'N':>9} {'fts':>5} {'vec':>5} {'reval':>5} {'refill':>6} {'∩np10':>5} "
        f"{'ins r/s':>8} {'vec r/s':>8} {'open s':>7} {'warm s':>7} {'size s':>7}"
    )
    for r in document["results"]:
        c, b = r["counts_median"], r["build"]
        write(
            f"{r['n']:>9,} {c['fts_candidates']:>5g} {c['vector_candidates']:>5g} "
            f"{c['revalidated']:>5g} {c['refills']:>6g} {c['items_in_numpy_top10']:>5g} "
            f"{b['insert_rows_per_s']:>8,.0f} {b['vector_write_rows_per_s']:>8,.0f} "
            f"{b['open_s']:>7.2f} {b['warm_s']:>7.2f} {r['seconds']:>7.1f}"
        )
    bandwidth = document["bandwidth"]
    write(
        f"copy bandwidth {bandwidth['copy_gb_s']:.1f} GB/s (read-only sum "
        f"{bandwidth['read_gb_s']:.1f} GB/s, {bandwidth['array_mib']} MiB arrays); "
        + load_line(document)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.recall",
        description="Our full recall vs numpy exact scan, bare FTS5 and the bandwidth bound.",
    )
    parser.add_argument("--quick", action="store_true", help="10k and 100k, less noise")
    parser.add_argument("--sizes", help="comma-separated claim counts (overrides --quick's)")
    parser.add_argument(
        "--queries", type=int, help="queries per size (default 50; 30 at 1M and with --quick)"
    )
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"default: {RESULTS}")
    args = parser.parse_args(argv)
    if args.sizes:
        sizes = parse_sizes(parser, args.sizes, minimum=CLUSTER)
    else:
        sizes = list(QUICK_SIZES if args.quick else SIZES)
    if args.queries is not None and args.queries < 1:
        parser.error("--queries: at least 1")
    document = run(sizes, quick=args.quick, queries=args.queries)
    report(document)
    write_json(args.json, document)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
