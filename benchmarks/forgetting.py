"""Forgetting benchmark: what one delete and each batch of a clear cost, made physical,
against bare SQLite doing the same deletes in the same run (R-FORGET-1/3, issue 15).

    python -m benchmarks forgetting            # deletes at 10k/100k/1M rows; clear of 90 % of 100k
    python -m benchmarks forgetting --quick    # deletes at 10k/100k rows; clear of 90 % of 20k
    python -m benchmarks forgetting --sizes 10000 100000 --clear-rows 10000
    python -m benchmarks forgetting --bulk-fill --cache /tmp/forgetting-cache   # 1M affordable

One delete is what `MemoryService.delete` asks of the store: `delete` then `checkpoint` (the
WAL folded back and truncated), with `synchronous=FULL`. Its baseline is bare SQLite on a
file of the same rows — a claims table and a plain FTS5 trigram index — deleting the row from
both in one transaction and committing, no scrub at all. `merge_ms` is what the design
before issue 15 added to every delete: one FTS5 'optimize' of the whole index, timed once on
the same store. The clear runs the store's own batches (≤ 256 rows) on a store where the
cleared agent holds 90 % of the rows; the last one includes the checkpoint. Its baseline
deletes the same rows from the bare file 256 at a time.

Goals (issue 15): one delete ≤ 50 ms median at 1M rows and flat from 10k to 1M; every clear
batch ≤ 500 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from benchmarks.claim_store import _NOW, _FixedClock, _sentence, _vocabulary
from benchmarks.support import latency_ms, write_json
from memory_adapters.sqlite_store import ApswClaimStore, fts
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import ClearPhase

__all__ = ["main", "run_clear", "run_deletes"]

_FILL = 5_000
_DELETES = 30
_BATCH = 256
_TARGET = "bench-target"


def _summary(samples: Sequence[float]) -> dict[str, float]:
    return latency_ms(samples, ("p50", "p95", "max"), digits=2)


def _fill(
    workdir: Path,
    name: str,
    rows: int,
    target_share: float,
    *,
    cache: Path | None = None,
    bulk: bool = False,
) -> tuple[ApswClaimStore, Path]:
    """A store and a bare file holding the same `rows` texts, `target_share` of them the
    target agent's and the rest spread over nine others. With `cache`, both files are built
    once there and copied for each run (a store written by older code migrates on open).
    `bulk` writes the claim rows straight through the store's own SQL (its CHECKs and
    triggers apply) and indexes them with `rebuild_fts`, as the writer would have: the
    store's `insert_many` runs ~1k rows/s on a loaded 2-core box, too slow for 1M."""
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        built = [cache / f"{name}.sqlite3", cache / f"{name}-bare.sqlite3"]
        if not all(path.exists() for path in built):
            store, _bare = _fill(cache, name, rows, target_share, bulk=bulk)
            store.close()
        for path in built:
            shutil.copyfile(path, workdir / path.name)
        return _open(workdir / built[0].name), workdir / built[1].name
    rng = random.Random(11)
    vocab = _vocabulary(rng)
    store = _open(workdir / f"{name}.sqlite3")
    bare_path = workdir / f"{name}-bare.sqlite3"
    bare = _bare_connection(bare_path)
    targets = int(rows * target_share)
    for offset in range(0, rows, _FILL):
        count = min(_FILL, rows - offset)
        texts = [_sentence(rng, vocab, offset + i) for i in range(count)]
        agents = [
            _TARGET if offset + i < targets else f"bench-other-{(offset + i) % 9}"
            for i in range(count)
        ]
        if bulk:
            _bulk_insert(store, offset, agents, texts)
        else:
            store.insert_many(
                [
                    ClaimDraft(agent_id=agent, kind="semantic", content=text)
                    for agent, text in zip(agents, texts, strict=True)
                ],
                origin=WriteOrigin.EXTRACTION,
                now=_NOW,
            )
        with bare:
            bare.executemany(
                "INSERT INTO claims (agent, content) VALUES (?, ?)", zip(agents, texts, strict=True)
            )
            bare.execute(
                "INSERT INTO fts (rowid, content) SELECT rid, content FROM claims WHERE rid > ?",
                (offset,),
            )
    if bulk:
        store.rebuild_fts()
    store.checkpoint()
    bare.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    bare.close()
    return store, bare_path


def _bulk_insert(
    store: ApswClaimStore, offset: int, agents: Sequence[str], texts: Sequence[str]
) -> None:
    conn = store._conn
    with conn:
        conn.executemany(
            "INSERT INTO agent_memory (id, agent_id, kind, content, canonical_content,"
            " created_at, updated_at) VALUES (?, ?, 'semantic', ?, ?, 0, 0)",
            (
                (f"mem-bulk-{offset + i}", agent, text, text.lower())
                for i, (agent, text) in enumerate(zip(agents, texts, strict=True))
            ),
        )


def _open(path: Path) -> ApswClaimStore:
    return ApswClaimStore(path, secret_policy=PatternSecretPolicy(), clock=_FixedClock())


def _bare_connection(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS claims (rid INTEGER PRIMARY KEY, agent TEXT, content TEXT)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS claims_agent ON claims (agent)")
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(content, content='', "
        "contentless_delete=1, tokenize='trigram')"
    )
    return conn


def _bare_delete(conn: apsw.Connection, rids: Sequence[int]) -> float:
    start = time.perf_counter()
    with conn:
        conn.executemany("DELETE FROM fts WHERE rowid = ?", ((rid,) for rid in rids))
        conn.executemany("DELETE FROM claims WHERE rid = ?", ((rid,) for rid in rids))
    return time.perf_counter() - start


def run_deletes(
    rows: int, workdir: Path, cache: Path | None = None, bulk: bool = False
) -> dict[str, Any]:
    """One size: `_DELETES` deletes of the target's claims, each made physical, next to the
    bare deletes of other rows of the same file, in alternation."""
    started = time.perf_counter()
    store, bare_path = _fill(
        workdir,
        f"delete-{rows}{'-bulk' if bulk else ''}",
        rows,
        target_share=0.1,
        cache=cache,
        bulk=bulk,
    )
    fill_s = time.perf_counter() - started
    rng = random.Random(5)
    victims = rng.sample(store.list_claims(_TARGET, limit=max(_DELETES * 4, 200)), _DELETES)
    bare = _bare_connection(bare_path)
    bare_rids = rng.sample(range(1, rows + 1), _DELETES)
    ours: list[float] = []
    baseline: list[float] = []
    for claim, rid in zip(victims, bare_rids, strict=True):
        start = time.perf_counter()
        store.delete(_TARGET, claim.id, now=_NOW)
        store.checkpoint()
        ours.append(time.perf_counter() - start)
        baseline.append(_bare_delete(bare, [rid]))
    start = time.perf_counter()
    # The design before issue 15, measured once: a merge of the whole index per delete.
    for table in fts.owner_tables(store._conn):
        store._conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    merge = time.perf_counter() - start
    store.close()
    bare.close()
    mine, bare_stats = _summary(ours), _summary(baseline)
    return {
        "rows": rows,
        "fill_s": round(fill_s, 1),
        "delete": mine,
        "bare_delete": bare_stats,
        "ratio_p50": round(mine["p50_ms"] / bare_stats["p50_ms"], 2),
        "merge_ms": round(1000 * merge, 1),
    }


def run_clear(
    rows: int, workdir: Path, share: float = 0.9, cache: Path | None = None
) -> dict[str, Any]:
    """A clear of the agent holding `share` of `rows`, batch by batch; the bare baseline
    deletes the same rows 256 at a time."""
    store, bare_path = _fill(workdir, f"clear-{rows}", rows, target_share=share, cache=cache)
    batches: list[float] = []
    store.begin_clear(_TARGET, now=_NOW)
    phase = ClearPhase.CLAIMS
    while phase is ClearPhase.CLAIMS:
        start = time.perf_counter()
        phase = store.run_clear_batch(_TARGET).phase
        batches.append(time.perf_counter() - start)
    store.finish_clear(_TARGET)
    store.close()
    bare = _bare_connection(bare_path)
    rids = [rid for (rid,) in bare.execute("SELECT rid FROM claims WHERE agent = ?", (_TARGET,))]
    baseline = [_bare_delete(bare, rids[i : i + _BATCH]) for i in range(0, len(rids), _BATCH)]
    bare.close()
    return {
        "rows": rows,
        "cleared_rows": int(rows * share),
        "batches": len(batches),
        "batch": _summary(batches),
        "last_batch_ms": round(1000 * batches[-1], 2),
        "total_s": round(sum(batches), 2),
        "bare_batch": _summary(baseline),
        "bare_total_s": round(sum(baseline), 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks forgetting")
    parser.add_argument("--quick", action="store_true", help="10k / 100k rows; clear of 20k")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--clear-rows", type=int, default=100_000)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--cache", type=Path, default=None, help="build the filled files once here and reuse them"
    )
    parser.add_argument("--skip-clear", action="store_true")
    parser.add_argument(
        "--bulk-fill", action="store_true", help="fill the delete stores through raw SQL"
    )
    args = parser.parse_args(argv)
    sizes, clear_rows = ([10_000, 100_000], 20_000) if args.quick else (args.sizes, args.clear_rows)
    with tempfile.TemporaryDirectory(prefix="forgetting-") as scratch:
        workdir = Path(scratch)
        deletes = []
        for rows in sizes:
            deletes.append(run_deletes(rows, workdir, args.cache, args.bulk_fill))
            print(json.dumps(deletes[-1]), flush=True)
        clear = None if args.skip_clear else run_clear(clear_rows, workdir, cache=args.cache)
        print(json.dumps(clear), flush=True)
    report = {"deletes": deletes, "clear": clear}
    if args.json is not None:
        write_json(args.json, report)
    medians = [entry["delete"]["p50_ms"] for entry in deletes]
    ok = max(medians) <= 50 and (clear is None or clear["batch"]["max_ms"] <= 500)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
