"""Turn soak: many agents' turns against one embedded store while everything else happens
at once — background ingestion of every settled turn, model writes, forgets, whole-agent
clears and another process taking SQLite's write lock in bursts (R-READ-1, R-HOST-1).

    python -m benchmarks turn_soak                 # 20 agents x 2,000 turns
    python -m benchmarks turn_soak --quick         # 4 agents x 40 turns

What it reports: turns past the soft deadline plus the documented 1 s margin (the promise:
0), turn latency percentiles, turns that failed open and why, view anchors expected and
written (a late anchor is still written after its turn: 0 lost), and whether `diagnose`
finds every agent healthy at the end.

The lock holder is a separate process, as a CLI `remember` or a backup would be. SQLite calls
run inline on the event loop (`InlineCalls`); a call there waits at most the store's
`loop_busy_timeout_ms` (250 ms) for that lock and, after one gave up, calls on the loop make
single attempts for 4 s (`sqlite_store.connection.LockWait`), so even `--lock-hold 8`
costs the loop a short wait every 4 s, not a 5 s busy timeout per write: extraction and
embedding retry on a later turn, access counts are skipped, and `write_errors` counts the
model writes refused meanwhile.

    python -m benchmarks turn_soak --lock-every 12 --lock-hold 8   # the 8 s holder of issue 11

Every `--progress-every` turns (all agents together) one line goes to stderr — turns done,
p50/p99/max so far, turns past the deadline and past deadline + margin, the longest the loop
went without running a 10 ms ticker, fail-opens — so a run stopped early still says
something; `--max-seconds` stops starting turns after that long and still ends as below, so
a bounded run reports anchors, health and integrity too. At the end, once every connection
is closed, the store file is checked: SQLite's `integrity_check`, the FTS index's own
`integrity-check`, and FTS rows against recallable claims; `checks_not_ok` lists the health
checks that did not say ok.

    python -m benchmarks turn_soak --agents 20 --turns 2000 --lock-every 12 --lock-hold 8 \
        --progress-every 1000 --json soak.json          # the Done-when size of issue 11
    python -m benchmarks turn_soak ... --max-seconds 2100   # the same, cut at 35 minutes

`--cpu-hogs N` starts N busy-loop processes beside the soak (and kills them at its end), so
a run short of CPU is reproducible: the soak's turns then compete for the cores as they do on
a machine shared with other work, and before/after figures come from the same conditions.
The report names the hogs and the machine's cores; `loop_stall_max_ms` says how long the
loop went without running a step.

    python -m benchmarks turn_soak --agents 20 --turns 2000 --lock-every 12 --lock-hold 8 \
        --cpu-hogs 12 --max-seconds 600                  # issue 11 at load ~12 on 2 cores
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from memory_adapters.sqlite_store import fts
from memory_adapters.tapes import InMemoryTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import StoreError
from memory_core.ports.tape import Anchor, AnchorKind
from memory_core.services.memory import MemoryService
from memory_core.services.read.runtime import ContributionOutcome
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins

__all__ = ["main", "run"]

MARGIN_S = 1.0
_TOPICS = (
    "espresso",
    "kayaking",
    "rust",
    "gardening",
    "chess",
    "jazz",
    "sourdough",
    "climbing",
    "astronomy",
    "pottery",
)
# Another process: take the write lock every `every` s for `hold` s until told to stop, or
# until the soak is gone (a long run stopped with a signal must not leave it holding).
# The scheduled clear outlasts a lock burst: attempts x pause well past a burst's hold.
_CLEAR_ATTEMPTS = 40
_CLEAR_RETRY_SECONDS = 0.1

_HOLDER = """
import os, sys, time, apsw
path, every, hold = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
parent = os.getppid()
conn = apsw.Connection(path)
conn.set_busy_timeout(60_000)
print("ready", flush=True)

def wait(seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if os.getppid() != parent:
            sys.exit(0)
        time.sleep(min(0.2, max(0.0, until - time.monotonic())))

while True:
    wait(every)
    conn.execute("BEGIN IMMEDIATE")
    wait(hold)
    conn.execute("ROLLBACK")
"""
# A CPU hog: spin until the soak is gone (checked every few million steps, so the check costs
# nothing against the spin itself).
_HOG = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(2_000_000):
        pass
"""


class CountingTape(InMemoryTape):
    """The in-memory tape, counting the view anchors that were really written."""

    def __init__(self) -> None:
        super().__init__()
        self.views: set[tuple[str, str]] = set()

    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        anchor_id = await super().append(anchor, deadline=deadline, cancel=cancel)
        if anchor.kind is AnchorKind.VIEW_ASSEMBLED and anchor.message_id is not None:
            self.views.add((anchor.agent_id, anchor.message_id))
        return anchor_id


class Progress:
    """Figures so far, printed every `every` turns (stderr: stdout carries the report)."""

    def __init__(self, *, every: int, deadline_s: float, started: float) -> None:
        self.every = every
        self.deadline_s = deadline_s
        self.started = started
        self.latencies: list[float] = []
        self.stall_max = 0.0
        self.failed_open = 0

    def add(self, latency: float, *, failed_open: bool) -> None:
        self.latencies.append(latency)
        self.failed_open += failed_open
        if self.every > 0 and len(self.latencies) % self.every == 0:
            print(self.line(), file=sys.stderr, flush=True)

    def line(self) -> str:
        ordered = sorted(self.latencies)
        limit = self.deadline_s + MARGIN_S
        return (
            f"turns {len(ordered)} wall {time.monotonic() - self.started:.0f}s"
            f" p50 {1000 * statistics.median(ordered):.0f}ms"
            f" p99 {1000 * ordered[int(0.99 * (len(ordered) - 1))]:.0f}ms"
            f" max {1000 * ordered[-1]:.0f}ms"
            f" past_deadline {sum(1 for value in ordered if value > self.deadline_s)}"
            f" past_deadline+{MARGIN_S:g}s {sum(1 for value in ordered if value > limit)}"
            f" loop_stall_max {1000 * self.stall_max:.0f}ms"
            f" failed_open {self.failed_open}"
        )


async def _ticker(stop: asyncio.Event, progress: Progress) -> None:
    """How late a 10 ms sleep wakes: the longest the loop was held by something else."""
    while not stop.is_set():
        before = time.monotonic()
        await asyncio.sleep(0.01)
        progress.stall_max = max(progress.stall_max, time.monotonic() - before - 0.01)


def _integrity(path: Path) -> dict[str, Any]:
    """Checks of the store file once every connection of the run is closed (the FTS
    command needs a writable connection; it changes nothing)."""
    conn = apsw.Connection(str(path))
    try:
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        # The mirror is one FTS5 table per owner: each gets FTS5's own check.
        try:
            for table in fts.owner_tables(conn):
                conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
            fts_ok = True
        except apsw.CorruptError:
            fts_ok = False
        recallable = one(
            "SELECT count(*) FROM agent_memory WHERE lifecycle_state = 'active'"
            " AND superseded_by IS NULL AND kind NOT IN ('persona', 'working')"
        )
        return {
            "integrity_check": one("PRAGMA integrity_check"),
            "fts_integrity_ok": fts_ok,
            "fts_rows": sum(fts.mirror_counts(conn).values()),
            "recallable_claims": recallable,
        }
    finally:
        conn.close()


def _text(rng: random.Random, agent: int, turn: int) -> str:
    topic = rng.choice(_TOPICS)
    if rng.random() < 0.5:
        return f"I really enjoy {topic} on weekends, turn {turn} of agent {agent}."
    return f"What do you remember about my {topic} plans?"


async def _agent(
    memory: MemoryService,
    *,
    tape: CountingTape,
    index: int,
    turns: int,
    rng: random.Random,
    record: dict[str, Any],
    progress: Progress,
    until: float,
) -> None:
    agent, session_id = f"soak-{index:02d}", f"session-{index:02d}"
    session = memory.session(agent, session_id)
    for turn in range(turns):
        if time.monotonic() >= until:
            break  # the time budget is spent: the ending (drain, health, integrity) still runs
        text = _text(rng, index, turn)
        user = tape.append_message(session_id, "user", text)
        started = time.monotonic()
        contribution = await session.prepare_turn(user.id, text)
        progress.add(
            time.monotonic() - started,
            failed_open=contribution.outcome is ContributionOutcome.FAILED_OPEN,
        )
        record["outcomes"][contribution.outcome.value] += 1
        record["degradations"].update(d.value for d in contribution.manifest.degradations)
        if contribution.outcome is not ContributionOutcome.FAILED_OPEN and not (
            contribution.manifest.is_empty
        ):
            record["expected"].add((agent, user.id))
        tape.append_message(session_id, "assistant", f"Noted, about {text[:20]}.")
        session.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        roll = rng.random()
        # Every fourth agent clears once mid-run whatever the rolls, so each run exercises a
        # clear beside the others' turns (the rolls alone may draw none in a short run).
        scheduled_clear = index % 4 == 0 and turn == turns // 2
        try:
            if scheduled_clear:
                await _clear_past_the_lock(memory, agent)
                record["clears"] += 1
            elif roll < 0.05:
                await memory.remember(agent, f"The user owns a {rng.choice(_TOPICS)} kit #{turn}.")
            elif roll < 0.08:
                claims = memory.store.list_claims(agent, limit=20)
                if claims:
                    await memory.forget(agent, rng.choice(claims).id)
            elif roll < 0.081:
                await memory.clear(agent)
                record["clears"] += 1
        except Exception as exc:  # the soak measures turns; a refused write is counted only
            record["write_errors"][type(exc).__name__] += 1
        await asyncio.sleep(0)


async def _clear_past_the_lock(memory: MemoryService, agent: str) -> None:
    """The scheduled clear retries while the foreign holder has the write lock: a refused
    clear is what the rolls measure, but the run must contain at least one clear beside the
    other agents' turns, and a short run's lock bursts can refuse every single attempt."""
    for _attempt in range(_CLEAR_ATTEMPTS - 1):
        try:
            await memory.clear(agent)
            return
        except StoreError:
            await asyncio.sleep(_CLEAR_RETRY_SECONDS)
    await memory.clear(agent)


async def _soak(
    root: Path,
    *,
    agents: int,
    turns: int,
    deadline_ms: int,
    lock_every: float,
    lock_hold: float,
    progress_every: int,
    max_seconds: float,
    cpu_hogs: int,
) -> dict[str, Any]:
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    config = MemoryConfig(
        settings=MemorySettings(prepare_turn_deadline_ms=deadline_ms), plugins=plugins
    )
    tape = CountingTape()
    memory = open_memory(
        root / "data",
        config=config,
        tape=tape,
        registry=load_plugins(strict=True, distributions={"agent-memory"}).registry,
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(memory.store.path), str(lock_every), str(lock_hold)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    holder.stdout.readline()  # "ready": the lock holder is running
    hogs = [subprocess.Popen([sys.executable, "-c", _HOG]) for _ in range(cpu_hogs)]
    record: dict[str, Any] = {
        "outcomes": Counter(),
        "degradations": Counter(),
        "expected": set(),
        "clears": 0,
        "write_errors": Counter(),
    }
    started = time.monotonic()
    progress = Progress(every=progress_every, deadline_s=deadline_ms / 1000, started=started)
    until = started + max_seconds if max_seconds > 0 else float("inf")
    stop = asyncio.Event()
    ticker = asyncio.create_task(_ticker(stop, progress))
    try:
        await asyncio.gather(
            *(
                _agent(
                    memory,
                    tape=tape,
                    index=index,
                    turns=turns,
                    rng=random.Random(index),
                    record=record,
                    progress=progress,
                    until=until,
                )
                for index in range(agents)
            )
        )
    finally:
        stop.set()
        await ticker
        for process in (holder, *hogs):
            process.kill()
            process.wait()
    wall = time.monotonic() - started
    for index in range(agents):
        await memory.session(f"soak-{index:02d}", f"session-{index:02d}").drain()
        # Embedding follows extraction in tasks of its own: settled too before the health
        # check, or it reports claims still pending that a moment later are not.
        await memory.embed_pending(f"soak-{index:02d}")
    health = await memory.diagnose([f"soak-{index:02d}" for index in range(agents)])
    store_path = memory.store.path
    await memory.aclose()
    if progress_every > 0:
        print(progress.line(), file=sys.stderr, flush=True)
    latencies = sorted(progress.latencies)
    limit = deadline_ms / 1000 + MARGIN_S
    lost = record["expected"] - tape.views
    return {
        "agents": agents,
        "turns_per_agent": turns,
        "turns": len(latencies),
        "stopped_at_time_budget": len(latencies) < agents * turns,
        "deadline_s": deadline_ms / 1000,
        "margin_s": MARGIN_S,
        "lock_every_s": lock_every,
        "lock_hold_s": lock_hold,
        "cpu_hogs": cpu_hogs,
        "cpu_count": os.cpu_count(),
        "wall_s": round(wall, 1),
        "past_deadline_plus_margin": sum(1 for value in latencies if value > limit),
        "past_deadline": sum(1 for value in latencies if value > deadline_ms / 1000),
        "p50_ms": round(1000 * statistics.median(latencies), 1),
        "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 1),
        "max_ms": round(1000 * latencies[-1], 1),
        "outcomes": dict(record["outcomes"]),
        "degradations": dict(record["degradations"]),
        "anchors_expected": len(record["expected"]),
        "anchors_lost": len(lost),
        "clears": record["clears"],
        "write_errors": dict(record["write_errors"]),
        "loop_stall_max_ms": round(1000 * progress.stall_max, 1),
        "healthy": health.healthy,
        "checks_not_ok": {
            check.name: f"{check.status.value}: {check.detail}"
            for check in health.checks
            if check.status.value != "ok"
        },
        "integrity": _integrity(store_path),
    }


def run(
    *,
    agents: int,
    turns: int,
    deadline_ms: int = 4_000,
    lock_every: float = 3.0,
    lock_hold: float = 0.5,
    progress_every: int = 0,
    max_seconds: float = 0.0,
    cpu_hogs: int = 0,
    root: Path | None = None,
) -> dict[str, Any]:
    """One soak in `root` (a temporary directory when None); its report."""
    with tempfile.TemporaryDirectory(prefix="turn-soak-") as scratch:
        return asyncio.run(
            _soak(
                Path(root or scratch),
                agents=agents,
                turns=turns,
                deadline_ms=deadline_ms,
                lock_every=lock_every,
                lock_hold=lock_hold,
                progress_every=progress_every,
                max_seconds=max_seconds,
                cpu_hogs=cpu_hogs,
            )
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks turn_soak")
    parser.add_argument("--quick", action="store_true", help="4 agents x 40 turns")
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--turns", type=int, default=2_000)
    parser.add_argument("--lock-every", type=float, default=3.0)
    parser.add_argument("--lock-hold", type=float, default=0.5)
    parser.add_argument(
        "--progress-every", type=int, default=500, help="turns between progress lines; 0: none"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=0.0,
        help="stop starting turns after this long, then drain and check as usual; 0: no limit",
    )
    parser.add_argument(
        "--cpu-hogs",
        type=int,
        default=0,
        help="busy-loop processes started beside the soak (and killed at its end)",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    agents, turns = (4, 40) if args.quick else (args.agents, args.turns)
    report = run(
        agents=agents,
        turns=turns,
        lock_every=args.lock_every,
        lock_hold=args.lock_hold,
        progress_every=args.progress_every,
        max_seconds=args.max_seconds,
        cpu_hogs=args.cpu_hogs,
    )
    text = json.dumps(report, indent=2, sort_keys=True)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    integrity = report["integrity"]
    ok = (
        report["past_deadline_plus_margin"] == 0
        and report["anchors_lost"] == 0
        and report["healthy"]
        and integrity["integrity_check"] == "ok"
        and integrity["fts_integrity_ok"]
        and integrity["fts_rows"] == integrity["recallable_claims"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
