"""Owner-bounded search benchmark: one agent's `search_fts` as other agents' rows grow, against
bare FTS5 over that agent's rows alone in the same run (R-READ-3, R-SCOPE-1, issue 15).

    python -m benchmarks owner_search                  # others 10k / 100k / 1M, agent 10k
    python -m benchmarks owner_search --quick          # others 10k / 100k
    python -m benchmarks owner_search --others 10000 200000 --agent-rows 10000

The agent holds `--agent-rows` claims; nine other agents hold `others` more. The fill is a
bulk path: rows go straight into the store's claims table through its own SQL (its CHECKs
and triggers apply), then `rebuild_fts` indexes them as the writer would — the store's
`insert_many` costs ~1k rows/s on a loaded 2-core box, which a 1M fill cannot afford.
Queries are two words of the agent's own texts (Zipf-distributed, so some are common), ANY
mode, limit 20; the baseline runs the same MATCH with bm25 on a file holding only the agent's
texts, query by query in alternation. The goal: the ratio stays flat as `others` grows.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from benchmarks.claim_store import _FixedClock, _sentence, _vocabulary
from benchmarks.support import latency_ms, write_json
from memory_adapters.sqlite_store import ApswClaimStore
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy

__all__ = ["main", "run_size"]

_TARGET = "bench-target"
_QUERIES = 60
_LIMIT = 20
_CHUNK = 20_000


def _texts(agent_rows: int, others: int) -> list[tuple[str, str]]:
    rng = random.Random(11)
    vocab = _vocabulary(rng)
    return [
        (_TARGET if i < agent_rows else f"bench-other-{i % 9}", _sentence(rng, vocab, i))
        for i in range(agent_rows + others)
    ]


def _bulk_fill(path: Path, rows: list[tuple[str, str]]) -> ApswClaimStore:
    store = ApswClaimStore(path, secret_policy=PatternSecretPolicy(), clock=_FixedClock())
    conn = store._conn
    for offset in range(0, len(rows), _CHUNK):
        with conn:
            conn.executemany(
                "INSERT INTO agent_memory (id, agent_id, kind, content, canonical_content,"
                " created_at, updated_at) VALUES (?, ?, 'semantic', ?, ?, 0, 0)",
                (
                    (f"mem-{offset + i}", agent, text, text.lower())
                    for i, (agent, text) in enumerate(rows[offset : offset + _CHUNK])
                ),
            )
    store.rebuild_fts()
    store.checkpoint()
    return store


def _bare(path: Path, texts: list[str]) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(content, content='', tokenize='trigram')")
    with conn:
        conn.executemany("INSERT INTO fts (content) VALUES (?)", ((text,) for text in texts))
    return conn


def run_size(agent_rows: int, others: int, workdir: Path) -> dict[str, Any]:
    rows = _texts(agent_rows, others)
    started = time.perf_counter()
    store = _bulk_fill(workdir / f"search-{others}.sqlite3", rows)
    fill_s = time.perf_counter() - started
    mine = [text for agent, text in rows if agent == _TARGET]
    bare = _bare(workdir / f"search-{others}-bare.sqlite3", mine)
    rng = random.Random(5)
    queries = [rng.choice(mine).split()[:2] for _ in range(_QUERIES)]
    everything = ScopeFilter.agent_only()
    ours: list[float] = []
    baseline: list[float] = []
    for terms in queries:
        start = time.perf_counter()
        store.search_fts(_TARGET, terms, scope_filter=everything, limit=_LIMIT)
        ours.append(time.perf_counter() - start)
        match = " OR ".join(f'"{term}"' for term in terms)
        start = time.perf_counter()
        bare.execute(
            "SELECT rowid, bm25(fts) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?",
            (match, _LIMIT),
        ).fetchall()
        baseline.append(time.perf_counter() - start)
    store.close()
    bare.close()
    search, bare_search = latency_ms(ours, digits=2), latency_ms(baseline, digits=2)
    return {
        "agent_rows": agent_rows,
        "other_rows": others,
        "fill_s": round(fill_s, 1),
        "search": search,
        "bare_agent_only": bare_search,
        "ratio_p50": round(search["p50_ms"] / bare_search["p50_ms"], 2),
        "ratio_p95": round(search["p95_ms"] / bare_search["p95_ms"], 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks owner_search")
    parser.add_argument("--quick", action="store_true", help="others 10k / 100k")
    parser.add_argument("--others", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--agent-rows", type=int, default=10_000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = [10_000, 100_000] if args.quick else args.others
    results = []
    with tempfile.TemporaryDirectory(prefix="owner-search-") as scratch:
        for others in sizes:
            results.append(run_size(args.agent_rows, others, Path(scratch)))
            print(json.dumps(results[-1]), flush=True)
    if args.json is not None:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
