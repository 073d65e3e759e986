"""Claim-store benchmark: insert throughput and FTS query latency of the apsw store at 10k
and 100k claims per agent with other agents present, next to bare FTS5 on the same rows in
the same run (R-BEYOND-3).

    python -m benchmarks.claim_store            # 10k and 100k per agent, 10 other agents
    python -m benchmarks.claim_store --quick    # 10k per agent, 3 other agents
    python -m benchmarks.claim_store --json out.json

Baselines: a plain FTS5 trigram table holding (a) only the measured agent's rows — the
single-tenant lower bound — and (b) all agents' rows queried without any owner filter.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

from benchmarks.support import latency_ms, timed, write_json
from memory_adapters.sqlite_store import ApswClaimStore
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import ClearPhase

__all__ = ["main", "run"]

_NOW = datetime(2026, 1, 1, tzinfo=UTC)
_BATCH = 1_000
_QUERIES = 200
_SINGLE_INSERTS = 300
_BARE_SQL = "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?"


class _FixedClock:
    def now(self) -> datetime:
        return _NOW

    def timezone(self) -> str:
        return "UTC"


def _vocabulary(rng: random.Random, size: int = 3_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 9))))
    return sorted(words)


def _sentence(rng: random.Random, vocab: Sequence[str], serial: int) -> str:
    # Zipf-like word choice so some terms are frequent and some rare, as in real memories.
    words = [vocab[min(int(rng.paretovariate(1.2)) - 1, len(vocab) - 1)] for _ in range(10)]
    return f"{' '.join(words)} {serial}"


def _bare(path: Path, rows: Sequence[str]) -> tuple[apsw.Connection, float]:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(content, tokenize='trigram')")
    start = time.perf_counter()
    for offset in range(0, len(rows), _BATCH):
        with conn:
            conn.executemany(
                "INSERT INTO fts (content) VALUES (?)",
                ((r,) for r in rows[offset : offset + _BATCH]),
            )
    return conn, time.perf_counter() - start


def run(per_agent: int, others: int, workdir: Path, seed: int = 7) -> dict[str, Any]:
    """One size: populate, then measure the store and both baselines on the same rows."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    agents = ["bench-target"] + [f"bench-other-{i}" for i in range(others)]
    texts = {agent: [_sentence(rng, vocab, i) for i in range(per_agent)] for agent in agents}
    store = ApswClaimStore(
        workdir / f"store-{per_agent}.sqlite3",
        secret_policy=PatternSecretPolicy(),
        clock=_FixedClock(),
    )
    insert_seconds = 0.0
    for agent in agents:
        rows = texts[agent]
        for offset in range(0, per_agent, _BATCH):
            drafts = [
                ClaimDraft(agent_id=agent, kind="semantic", content=t)
                for t in rows[offset : offset + _BATCH]
            ]
            start = time.perf_counter()
            store.insert_many(drafts, origin=WriteOrigin.EXTRACTION, now=_NOW)
            insert_seconds += time.perf_counter() - start
    total_rows = per_agent * len(agents)
    single = timed(
        [
            lambda i=i: store.insert(
                ClaimDraft(
                    agent_id="bench-target", kind="semantic", content=f"single {i} {vocab[i]}"
                ),
                origin=WriteOrigin.EXTRACTION,
                now=_NOW,
            )
            for i in range(_SINGLE_INSERTS)
        ]
    )
    everything = [t for agent in agents for t in texts[agent]]
    own, own_seconds = _bare(workdir / f"bare-own-{per_agent}.sqlite3", texts["bench-target"])
    shared, shared_seconds = _bare(workdir / f"bare-all-{per_agent}.sqlite3", everything)

    queries = [
        [vocab[min(int(rng.paretovariate(0.8)), len(vocab) - 1)] for _ in range(rng.randint(1, 3))]
        for _ in range(_QUERIES)
    ]
    results: dict[str, Any] = {
        "per_agent": per_agent,
        "agents": len(agents),
        "total_rows": total_rows,
        "insert": {
            "store_rows_per_s": total_rows / insert_seconds,
            "bare_fts5_rows_per_s": len(everything) / shared_seconds,
            "store_single_insert": latency_ms(single),
            "batch": _BATCH,
        },
        "query": {},
    }
    results["insert"]["ratio_bare_over_store"] = (
        results["insert"]["bare_fts5_rows_per_s"] / results["insert"]["store_rows_per_s"]
    )
    del own_seconds
    # "frequent": Zipf-head words, each in a large share of rows (the worst case);
    # "specific": words past the head, like stopword-stripped recall keywords.
    query_sets = {
        "frequent": queries,
        "specific": [
            [rng.choice(vocab[50:]) for _ in range(rng.randint(1, 3))] for _ in range(_QUERIES)
        ],
    }
    for name, qset in query_sets.items():
        for limit in (6, 50):
            results["query"][f"{name}_limit_{limit}"] = _query_latencies(
                store, own, shared, qset, limit
            )
    results["forget"] = _forget_timings(store, per_agent)
    store.close()
    start = time.perf_counter()
    reopened = ApswClaimStore(
        workdir / f"store-{per_agent}.sqlite3",
        secret_policy=PatternSecretPolicy(),
        clock=_FixedClock(),
    )
    reopened.repair(now=_NOW)
    results["open_and_repair_ms"] = 1000 * (time.perf_counter() - start)
    reopened.close()
    own.close()
    shared.close()
    return results


def _query_latencies(
    store: ApswClaimStore,
    own: apsw.Connection,
    shared: apsw.Connection,
    queries: list[list[str]],
    limit: int,
) -> dict[str, Any]:
    scope = ScopeFilter.agent_only()
    match = [" OR ".join(f'"{t}"' for t in terms) for terms in queries]
    store_ms = latency_ms(
        timed(
            [
                lambda terms=terms: store.search_fts(
                    "bench-target", terms, scope_filter=scope, limit=limit
                )
                for terms in queries
            ]
        )
    )
    own_ms = latency_ms(
        timed([lambda q=q: own.execute(_BARE_SQL, (q, limit)).fetchall() for q in match])
    )
    shared_ms = latency_ms(
        timed([lambda q=q: shared.execute(_BARE_SQL, (q, limit)).fetchall() for q in match])
    )
    return {
        "store": store_ms,
        "bare_fts5_agent_rows": own_ms,
        "bare_fts5_all_rows_no_owner_filter": shared_ms,
        "ratio_p50_store_over_bare_agent_rows": store_ms["p50_ms"] / own_ms["p50_ms"],
    }


def _forget_timings(store: ApswClaimStore, per_agent: int) -> dict[str, Any]:
    """Selective delete latency, then a whole clear of the measured agent, batch by batch
    (DeepChat's gate: 10k rows in 40 batches of ≤500 ms each)."""
    victims = store.list_claims("bench-target", limit=100)
    deletes = timed([lambda c=c: store.delete("bench-target", c.id, now=_NOW) for c in victims])
    store.begin_clear("bench-target", now=_NOW)
    batches: list[float] = []
    phase = ClearPhase.CLAIMS
    while phase is ClearPhase.CLAIMS:
        start = time.perf_counter()
        phase = store.run_clear_batch("bench-target").phase
        batches.append(time.perf_counter() - start)
    store.finish_clear("bench-target")
    return {
        "delete": latency_ms(deletes),
        "clear_rows": per_agent + _SINGLE_INSERTS - len(victims),
        "clear_batches": len(batches),
        "clear_batch": latency_ms(batches, ("p50", "p95", "max")),
        "clear_total_s": sum(batches),
    }


def _print(results: list[dict[str, Any]]) -> None:
    print(
        f"{'per agent':>10} {'agents':>6} {'store ins/s':>12} {'bare ins/s':>11} {'ratio':>6}"
        f" {'1-row ins p50 ms':>17}"
    )
    for r in results:
        ins = r["insert"]
        print(
            f"{r['per_agent']:>10} {r['agents']:>6} {ins['store_rows_per_s']:>12.0f}"
            f" {ins['bare_fts5_rows_per_s']:>11.0f} {ins['ratio_bare_over_store']:>6.2f}"
            f" {ins['store_single_insert']['p50_ms']:>17.3f}"
        )
    print()
    print(
        f"{'per agent':>10} {'queries, limit':>14} {'store p50/p95 ms':>18}"
        f" {'bare own p50/p95':>18} {'bare all p50/p95':>18} {'ratio p50':>9}"
    )
    for r in results:
        for key, q in r["query"].items():
            cells = [q["store"], q["bare_fts5_agent_rows"], q["bare_fts5_all_rows_no_owner_filter"]]
            text = " ".join(f"{c['p50_ms']:>8.2f}/{c['p95_ms']:<9.2f}" for c in cells)
            print(
                f"{r['per_agent']:>10} {key.replace('_limit_', ', '):>14} {text} "
                f"{q['ratio_p50_store_over_bare_agent_rows']:>9.2f}"
            )


def _print_forget(results: list[dict[str, Any]]) -> None:
    print()
    print(
        f"{'per agent':>10} {'delete p50/p95 ms':>18} {'clear rows':>10} {'batches':>7}"
        f" {'batch p50/max ms':>17} {'clear s':>8} {'open+repair ms':>15}"
    )
    for r in results:
        f = r["forget"]
        print(
            f"{r['per_agent']:>10} {f['delete']['p50_ms']:>8.2f}/{f['delete']['p95_ms']:<9.2f}"
            f" {f['clear_rows']:>10} {f['clear_batches']:>7}"
            f" {f['clear_batch']['p50_ms']:>8.1f}/{f['clear_batch']['max_ms']:<8.1f}"
            f" {f['clear_total_s']:>8.2f} {r['open_and_repair_ms']:>15.1f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.claim_store")
    parser.add_argument("--quick", action="store_true", help="10k per agent, 3 other agents")
    parser.add_argument("--sizes", type=int, nargs="+", help="claims per agent (default 10k 100k)")
    parser.add_argument("--others", type=int, help="other agents present (default 10)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--dir", type=Path, help="keep the databases here (default: a temp dir)")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([10_000] if args.quick else [10_000, 100_000])
    others = args.others if args.others is not None else (3 if args.quick else 10)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        results = [run(size, others, workdir) for size in sizes]
    _print(results)
    _print_forget(results)
    if args.json:
        write_json(args.json, {"claim_store": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
