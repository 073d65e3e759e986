"""Ingestion benchmark: claims/s from a tape to embedded claims, against the embedder's own
batched rate on the same claim texts (issue 15).

    python -m benchmarks ingestion                   # 300 user messages per mode
    python -m benchmarks ingestion --quick           # 60
    python -m benchmarks ingestion --messages 2000   # the size the note quotes
    python -m benchmarks ingestion --conversation FILE   # a conversation's turns instead

Every mode runs the public API with the default plugins (SQLite claims, DuckDB vectors, the
rules extractor, the offline MiniLM embedder) on an in-memory tape, each on an agent of its
own, with the model loaded before any clock starts:

- **bulk**: the whole tape is on the session when the turn settles; one `after_turn_settled`
  ingests it, and the clock stops when the session has drained and no claim of the agent is
  still pending its embedding;
- **turn by turn** (ingestion turn by turn): per user message the host appends the exchange
  (the message and the reply) and calls `after_turn_settled`, what a host does after each
  turn, then lets its loop move on; the clock runs from the first turn until the last claim
  is embedded. No `prepare_turn`: that is the read path, which the `turn` benchmark measures
  on its own (issue 15 keeps the two apart);
- **host turn by turn** (an extra line, no goal): the same with each turn's `prepare_turn`
  first, as a whole host does — the turns' recall, query embedding included, is inside the
  clock. Also reported: the seconds inside `prepare_turn`, and the ratio over the time outside
  the turns. `--no-host` leaves it out.

The messages are built from templates (each becomes about one claim), or with
`--conversation` are the turns of a conversation file, every turn a user message: a JSON
list of strings, or a LoCoMo-style file (`[{"conversation": {"session_1": [{"text": ...}]}}]`,
read where it lies; its licence keeps it out of this repository). A conversation's turns are
longer and mostly chit-chat, so the rules extractor does more work per claim.

The baseline is the same model instance embedding the claim texts the mode stored, in
requests of `embedding_batch_size`, timed twice right after the mode (their mean). Each mode
runs `--repeats` times (3; 1 with `--quick`), alternating with the others, each time on a new
agent with new messages; the run of median ratio is reported, with every run's ratio beside
it, because a shared machine's load moves single runs. Reported: claims, seconds, claims/s,
the baseline's claims/s, the ratio (goal: bulk >= 0.8, turn by turn >= 0.6), the same ratio by
the process's CPU seconds (every thread's, over the same span as the wall clock; what the
work costs, which a loaded machine's scheduling moves less than wall time), and the load
average before and after. Results: a table on stdout, JSON to
`benchmarks/results/ingestion.json`.

Last, **pipeline alone**: bulk again, `--repeats` times on new messages, in a service whose
embedder answers at once with a fixed vector — the CPU the pipeline spends per claim besides
the model's (extraction, the claim and vector stores, the drain, the working rebuild). With
the model's own CPU per claim (the bulk baseline's) it gives bulk's **ceiling**, model /
(model + pipeline): where the model alone keeps every core busy, as the local model does,
nothing runs beside it for free, so no scheduling brings the wall ratio above that.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.ingestion.alone import ceiling, pipeline_alone
from benchmarks.ingestion.modes import (
    Timed,
    baseline,
    bulk,
    calls,
    contents,
    host_turns,
    open_service,
    say,
    turn_by_turn,
)
from benchmarks.ingestion.texts import conversation, messages
from memory_adapters.local_embedder import MiniLMEmbedder
from memory_adapters.tapes import InMemoryTape
from memory_core.services.memory import MemoryService

__all__ = ["conversation", "main", "messages", "run"]

RESULTS = Path(__file__).parent.with_name("results") / "ingestion.json"
DEFAULT_MESSAGES = 300
QUICK_MESSAGES = 60
GOALS = {"bulk": 0.8, "turn_by_turn": 0.6}


def _figures(
    claims: int, seconds: float, cpu: float, baselines: Sequence[tuple[float, float]]
) -> dict[str, Any]:
    """Ratios by wall time (what a host waits) and by the process's CPU time (all threads:
    the model's, the extraction worker's, the loop's), which a loaded machine moves less."""
    wall = statistics.mean(b[0] for b in baselines)
    base_cpu = statistics.mean(b[1] for b in baselines)
    rate, batched = claims / seconds, claims / wall
    return {
        "claims": claims,
        "seconds": round(seconds, 3),
        "claims_per_s": round(rate, 1),
        "baseline_seconds": [round(b[0], 3) for b in baselines],
        "baseline_claims_per_s": round(batched, 1),
        "ratio": round(rate / batched, 3),
        "cpu_seconds": round(cpu, 3),
        "baseline_cpu_seconds": round(base_cpu, 3),
        "cpu_ratio": round(base_cpu / cpu, 3),
    }


def _median_of(runs: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """The run of median ratio, with every run's ratio beside it (load moves single runs)."""
    ordered = sorted(runs, key=lambda run: run["ratio"])
    return {
        **ordered[(len(ordered) - 1) // 2],
        "ratios": [run["ratio"] for run in runs],
        "cpu_ratios": [run["cpu_ratio"] for run in runs],
        "goal": GOALS.get(mode),
    }


async def _measured(
    memory: MemoryService, model: MiniLMEmbedder, work: Awaitable[Timed], agent: str
) -> dict[str, Any]:
    """One run of a mode (`work`, on `agent`): its figures against two baselines on the
    claim texts it stored."""
    timed = await work
    stored = contents(memory, agent)
    size = memory.settings.embedding_batch_size
    baselines = [await baseline(model, stored, size) for _ in range(2)]
    row = _figures(len(stored), timed.seconds, timed.cpu, baselines)
    if timed.in_turns is not None:
        row["prepare_turn_seconds"] = round(timed.in_turns, 3)
        # The host's time outside its turns: what ingestion adds once the turns are paid
        # (its work that overlapped a turn's awaits is not in it, nor is any slowdown it
        # caused inside a turn — read it beside the end-to-end ratio, never instead).
        outside = timed.seconds - timed.in_turns
        row["outside_turns_seconds"] = round(outside, 3)
        row["outside_turns_ratio"] = round(
            (len(stored) / outside) / row["baseline_claims_per_s"], 3
        )
    return row


async def _run(
    root: Path, count: int, repeats: int, host: bool, source: Path | None
) -> dict[str, Any]:
    tape, model = InMemoryTape(), MiniLMEmbedder()
    memory = open_service(root / "data", tape, model)
    modes: dict[str, Callable[..., Awaitable[Timed]]] = {
        "bulk": bulk,
        "turn_by_turn": turn_by_turn,
    }
    if host:
        modes["host_turn_by_turn"] = host_turns
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}

    def texts_of(seed: int) -> list[str]:
        if source is None:
            return messages(count, seed=seed * count)
        return conversation(source, count, seed=seed * count)

    try:
        await memory.gateway.warm(agent_id="bench-warm", **calls())  # the model loads here
        # Each repeat runs every mode in turn, each followed by two baselines on the claim
        # texts it stored; every mode on an agent of its own, with messages of its own.
        seed = 0
        for repeat in range(repeats):
            for mode, work in modes.items():
                agent = f"bench-{mode}-{repeat}"
                texts = texts_of(seed)
                seed += 1
                row = await _measured(memory, model, work(memory, tape, texts, agent), agent)
                runs[mode].append(row)
                say(f"  {mode} {repeat + 1}/{repeats}: {row}")
    finally:
        await memory.aclose()
    report: dict[str, Any] = {"messages": count, "repeats": repeats}
    for mode, rows in runs.items():
        report[mode] = _median_of(rows, mode)
    report["pipeline_alone"] = await pipeline_alone(
        root / "instant", [texts_of(seed + repeat) for repeat in range(repeats)]
    )
    report["bulk_ceiling"] = ceiling(report["bulk"], report["pipeline_alone"])
    return report


def run(
    count: int,
    *,
    repeats: int = 3,
    host: bool = True,
    root: Path | None = None,
    source: Path | None = None,
) -> dict[str, Any]:
    """Every mode on `count` user messages each, `repeats` times (in `root`, else a
    temporary directory); `host=False` leaves out the host line; `source`: a conversation
    file whose turns are the messages."""
    before = [round(value, 2) for value in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="ingestion-bench-") as scratch:
        report = asyncio.run(_run(Path(root or scratch), count, repeats, host, source))
    if source is not None:
        report["conversation"] = source.name
    report["load_average_before"] = before
    report["load_average"] = [round(value, 2) for value in os.getloadavg()]
    report["cpus"] = os.cpu_count()
    report["python"] = platform.python_version()
    return report


def _table(report: dict[str, Any]) -> str:
    lines = [
        f"ingestion, {report['messages']} user messages per mode"
        + (f" from {report['conversation']}" if "conversation" in report else "")
        + ", load average "
        f"{report['load_average_before']} -> {report['load_average']}",
        f"{'mode':<19}{'claims':>8}{'s':>9}{'claims/s':>10}{'batched/s':>11}{'ratio':>7}"
        f"{'cpu ratio':>10}{'goal':>6}",
    ]
    for mode in ("bulk", "turn_by_turn", "host_turn_by_turn"):
        row = report.get(mode)
        if row is None:
            continue
        goal = "" if row["goal"] is None else f"{row['goal']:.1f}"
        lines.append(
            f"{mode:<19}{row['claims']:>8}{row['seconds']:>9.2f}{row['claims_per_s']:>10.1f}"
            f"{row['baseline_claims_per_s']:>11.1f}{row['ratio']:>7.2f}{row['cpu_ratio']:>10.2f}"
            f"{goal:>6}"
        )
    bound = report["bulk_ceiling"]
    lines.append(
        f"pipeline alone (bulk on an instant embedder): {bound['pipeline_cpu_ms_per_claim']:.2f}"
        f" ms CPU per claim, the model {bound['model_cpu_ms_per_claim']:.2f}; bulk's ceiling"
        f" where the model fills every core: {bound['ratio']:.2f}"
    )
    host = report.get("host_turn_by_turn")
    if host is not None:
        lines.append(
            f"host turn by turn (read path included, no goal): {host['prepare_turn_seconds']:.2f}"
            f" s inside prepare_turn; outside the turns {host['outside_turns_seconds']:.2f} s,"
            f" ratio {host['outside_turns_ratio']:.2f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks ingestion")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_MESSAGES} messages")
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each mode (median)")
    parser.add_argument(
        "--no-host", action="store_true", help="leave out the host line (turns with recall)"
    )
    parser.add_argument(
        "--conversation", type=Path, help="a conversation file whose turns are the messages"
    )
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    report = run(
        QUICK_MESSAGES if args.quick else args.messages,
        repeats=1 if args.quick else args.repeats,
        host=not args.no_host,
        source=args.conversation,
    )
    print(_table(report))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0
