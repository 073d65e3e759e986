"""Maintenance soak: many agents' conversations extracted by the `rules` extractor while
background maintenance runs on short timers, is stopped, drained and started again at
random, and the process is killed with SIGKILL once and restarted (R-MAINT-1, R-MAINT-2,
R-HOST-1, R-LINEAGE-1).

    python -m benchmarks maintenance_soak            # 20 agents x 2,000 turns
    python -m benchmarks maintenance_soak --quick    # 4 agents x 40 turns

Phase 1 runs in a child process (at most half of every agent's turns) that is SIGKILLed after
`--kill-after` seconds (or when it finishes first); phase 2 reopens the same data directory,
runs every agent's remaining turns (from the count of its user messages on the tape, so each
agent says exactly `--turns` things across both phases) with maintenance cycling,
quiesces, runs a final pass per agent and checks integrity:

- FTS mirror = recallable claims (rows of the contentless index vs live rows);
- vector ids = ready claims, per agent, after the coverage check of a warm-up;
- every lineage edge points to an existing claim or a deleted one (its delete audited);
- no cross-agent row (an edge or a dirty seed naming another agent's claim);
- no dirty seed older than the final pass (none starved).

Reported: turns, merges, passes, stops, exceptions escaping (the promise: 0), the checks,
and the drains: the longest and how many ran past `maintenance_drain_seconds` (10 s here)
and raised `MaintenanceDrainTimeout` — the typed outcome a host postpones its operation on.
On a CPU-starved loop a fenced pass may need longer than that to reach its next await.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from benchmarks.support import write_json
from memory_adapters.sqlite_store import fts
from memory_adapters.tapes import SqliteTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.services.maintenance import MaintenanceDrainTimeout
from memory_core.services.memory import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins

__all__ = ["main", "run"]

_PETS = ("cat", "dog", "parrot", "rabbit", "turtle", "hamster")
_NAMES = ("Miso", "Rex", "Kiwi", "Luna", "Pip", "Nala", "Otis", "Juno")
_HOBBIES = ("chess", "jazz", "climbing", "pottery", "sourdough", "kayaking", "astronomy")
_SETTLED = TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)


def _settings() -> MemorySettings:
    # Short timers, so maintenance really runs (and is really interrupted) during the soak.
    return MemorySettings(
        maintenance_arming_seconds=0.05,
        maintenance_startup_delay_seconds=0.05,
        maintenance_stagger_seconds=0.01,
        maintenance_debounce_seconds=0.2,
        maintenance_drain_seconds=10.0,
        merge_similarity_threshold=0.7,  # the hashing embedder scores rewordings near 0.8
    )


def _open(root: Path) -> tuple[MemoryService, SqliteTape]:
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    tape = SqliteTape(root / "tape.sqlite3")
    memory = open_memory(
        root / "data",
        config=MemoryConfig(settings=_settings(), plugins=plugins),
        tape=tape,
        registry=load_plugins(strict=True, distributions={"agent-memory"}).registry,
    )
    return memory, tape


def _agent_id(index: int) -> str:
    return f"soak-{index:02d}"


def _said(rng: random.Random, turn: int) -> str:
    roll = rng.random()
    if roll < 0.4:
        return f"I really enjoy {rng.choice(_HOBBIES)} on weekends."
    if roll < 0.6:
        return f"My {rng.choice(_PETS)} is called {rng.choice(_NAMES)}."
    return f"Can you help me plan day {turn}?"


async def _agent(
    memory: MemoryService,
    tape: SqliteTape,
    *,
    index: int,
    turns: range,
    rng: random.Random,
    record: dict[str, Any],
) -> None:
    agent = _agent_id(index)
    session_id = f"session-{index:02d}"
    session = memory.session(agent, session_id)
    for turn in turns:
        text = _said(rng, turn)
        tape.append_message(session_id, "user", text)
        tape.append_message(session_id, "assistant", "Noted.")
        try:
            session.after_turn_settled(_SETTLED)
            if rng.random() < 0.05:  # a rewording the rules extractor would not produce
                pet, name = rng.choice(_PETS), rng.choice(_NAMES)
                await memory.remember(agent, f"The user's {pet} is called {name}.")
                await memory.remember(agent, f"The user's {pet} is named {name}.")
            if rng.random() < 0.01:
                claims = memory.list_claims(agent, limit=20)
                if claims:
                    await memory.delete(agent, rng.choice(claims).id)
        except Exception as exc:  # counted: the promise is that none escapes
            record["errors"][type(exc).__name__] += 1
        record["turns"] += 1
        await asyncio.sleep(0)


async def _cycler(
    memory: MemoryService, rng: random.Random, record: dict[str, Any], done: asyncio.Event
) -> None:
    """Stop, drain and start maintenance at random while the agents talk."""
    while not done.is_set():
        await asyncio.sleep(rng.uniform(0.2, 0.8))
        started = time.monotonic()
        memory.stop_maintenance()
        try:
            await memory.drain_maintenance()
        except MaintenanceDrainTimeout:
            # The typed outcome a host acts on (it postpones its operation); the stopped
            # pass is fenced, so restarting cannot let it write.
            record["drain_timeouts"] += 1
        except Exception as exc:
            record["errors"][type(exc).__name__] += 1
        record["drain_max_s"] = max(record["drain_max_s"], time.monotonic() - started)
        record["stops"] += 1
        memory.start_maintenance()


async def _progress(record: dict[str, Any], phase: int, total: int, done: asyncio.Event) -> None:
    """Figures every 30 s on stderr, so a run stopped early (or SIGKILLed) still says
    something."""
    started = time.monotonic()
    while not done.is_set():
        await asyncio.sleep(30)
        figures = {key: record[key] for key in ("turns", "stops", "drain_timeouts", "drain_max_s")}
        figures["drain_max_s"] = round(figures["drain_max_s"], 2)
        print(
            f"[phase {phase}] {time.monotonic() - started:.0f} s: {figures['turns']}/{total}"
            f" turns, {json.dumps(figures)} errors={dict(record['errors'])}",
            file=sys.stderr,
            flush=True,
        )


async def _phase(root: Path, *, turns: Sequence[range], seed: int) -> dict[str, Any]:
    """Every agent `index` runs `turns[index]`, all at once, with maintenance cycling."""
    memory, tape = _open(root)
    record: dict[str, Any] = {
        "turns": 0,
        "stops": 0,
        "drain_timeouts": 0,
        "drain_max_s": 0.0,
        "errors": Counter(),
    }
    memory.start_maintenance()
    done = asyncio.Event()
    cycler = asyncio.ensure_future(_cycler(memory, random.Random(seed), record, done))
    total = sum(len(r) for r in turns)
    reporter = asyncio.ensure_future(_progress(record, seed, total, done))
    try:
        await asyncio.gather(
            *(
                _agent(
                    memory,
                    tape,
                    index=index,
                    turns=own,
                    rng=random.Random(seed * 1_000 + index),
                    record=record,
                )
                for index, own in enumerate(turns)
            )
        )
    finally:
        done.set()
        await cycler
        reporter.cancel()
    await memory.quiesce()
    record["errors"] = dict(record["errors"])
    record["drain_max_s"] = round(record["drain_max_s"], 2)
    record["memory"] = memory
    return record


def _child(root: Path, agents: int, turns: int) -> None:
    asyncio.run(_phase(root, turns=[range(turns)] * agents, seed=1))


def _turns_done(root: Path, agents: int) -> list[int]:
    """Turns each agent began before the SIGKILL: its user messages on the tape (none
    when the kill came before the tape was created)."""
    path = root / "tape.sqlite3"
    if not path.exists():
        return [0] * agents
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    said = dict(
        conn.execute(
            """SELECT session_id, count(*) FROM tape_entry
               WHERE type = 'message' AND role = 'user' GROUP BY session_id"""
        ).fetchall()
    )
    conn.close()
    return [int(said.get(f"session-{index:02d}", 0)) for index in range(agents)]


async def _finish(root: Path, *, agents: int, turns: int) -> dict[str, Any]:
    """Phase 2: every agent's turns from where phase 1 left it to `turns`, so each agent
    has said exactly `turns` things across both phases; then the final passes and checks."""
    done = _turns_done(root, agents)
    record = await _phase(root, turns=[range(d, turns) for d in done], seed=2)
    record["phase1_turns"] = sum(done)
    memory: MemoryService = record.pop("memory")
    memory.resume()
    passes = merges = 0
    final_start = memory.now()
    for index in range(agents):
        agent = _agent_id(index)
        for _ in range(2):  # the second settles the seeds the first one's re-embedding left
            report = await memory.run_maintenance(agent, heavy=False)
            passes += 1
            merges += report.merged
        await memory.warm(agent)
    checks = await _vector_check(memory, agents)
    stale = sum(
        1
        for index in range(agents)
        for seed in memory.store.list_dirty(_agent_id(index), limit=256)
        if seed.enqueued_at < final_start
    )
    path = Path(memory.store.path)  # type: ignore[attr-defined]
    await memory.aclose()
    checks.update(_sql_checks(path))
    checks["stale_dirty_seeds"] = stale
    return {**record, "final_passes": passes, "final_merges": merges, "checks": checks}


async def _vector_check(memory: MemoryService, agents: int) -> dict[str, Any]:
    vectors, mismatched = memory.index.vectors, []
    for index in range(agents):
        agent = _agent_id(index)
        certificate = memory.index.certificate(agent)
        if vectors is None or certificate is None:
            mismatched.append(agent)
            continue
        deadline = Deadline.after(memory._infra, 30)
        stored = await vectors.list_ids(agent, deadline=deadline, cancel=CancellationToken())
        ready = memory.store.list_ready_ids(agent, certificate.identity)
        if sorted(stored) != sorted(ready):
            mismatched.append(agent)
    return {"vector_mismatch_agents": mismatched}


def _sql_checks(path: Path) -> dict[str, Any]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    recallable = one(
        "SELECT count(*) FROM agent_memory WHERE lifecycle_state = 'active'"
        " AND superseded_by IS NULL AND kind NOT IN ('persona', 'working')"
    )
    unknown = one(
        """SELECT count(*) FROM (
             SELECT agent_id, parent_memory_id AS id FROM agent_memory_derivation
             UNION SELECT agent_id, child_memory_id FROM agent_memory_derivation) e
           WHERE NOT EXISTS (SELECT 1 FROM agent_memory m WHERE m.agent_id = e.agent_id
                             AND m.id = e.id)
             AND NOT EXISTS (SELECT 1 FROM agent_memory_audit a WHERE a.agent_id = e.agent_id
                             AND a.event_type = 'memory/delete' AND a.memory_ref_id = e.id)"""
    )
    cross = one(
        """SELECT (SELECT count(*) FROM agent_memory_derivation d JOIN agent_memory m
                     ON m.id IN (d.parent_memory_id, d.child_memory_id)
                     AND m.agent_id <> d.agent_id)
              + (SELECT count(*) FROM agent_memory_dirty s JOIN agent_memory m
                     ON m.id = s.memory_id AND m.agent_id <> s.agent_id)"""
    )
    report = {
        "fts_rows": sum(fts.mirror_counts(conn).values()),
        "recallable_claims": recallable,
        "lineage_edges": one("SELECT count(*) FROM agent_memory_derivation"),
        "lineage_unknown_ids": unknown,
        "cross_agent_rows": cross,
    }
    conn.close()
    return report


def run(*, agents: int, turns: int, kill_after: float, root: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="maintenance-soak-") as scratch:
        base = Path(root or scratch)
        base.mkdir(parents=True, exist_ok=True)
        half = turns // 2
        started = time.monotonic()
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.maintenance_soak",
                "--child",
                str(base),
                "--agents",
                str(agents),
                "--turns",
                str(half),
            ],
            env={**os.environ},
        )
        try:
            child.wait(timeout=kill_after)
            killed = False
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait()
            killed = True
        report = asyncio.run(_finish(base, agents=agents, turns=turns))
        report.update(
            agents=agents,
            turns_per_agent=turns,
            killed=killed,
            wall_s=round(time.monotonic() - started, 1),
        )
        return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks maintenance_soak")
    parser.add_argument("--quick", action="store_true", help="4 agents x 40 turns")
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--turns", type=int, default=2_000)
    parser.add_argument("--kill-after", type=float, default=60.0, help="SIGKILL phase 1 after")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child, args.agents, args.turns)
        return 0
    agents, turns = (4, 40) if args.quick else (args.agents, args.turns)
    kill_after = 3.0 if args.quick else args.kill_after
    report = run(agents=agents, turns=turns, kill_after=kill_after)
    print(write_json(args.json, report, sort_keys=True, default=str))
    checks = report["checks"]
    ok = (
        not report["errors"]
        and checks["fts_rows"] == checks["recallable_claims"]
        and not checks["vector_mismatch_agents"]
        and checks["lineage_unknown_ids"] == 0
        and checks["cross_agent_rows"] == 0
        and checks["stale_dirty_seeds"] == 0
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
