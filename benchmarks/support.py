"""What the benchmarks share: timing calls, summarising latencies, describing the machine a
run was measured on, and writing the results document.

Percentiles are read off the sorted samples by one of two rank rules, named where used, so a
figure stays comparable with the runs documented before this module existed:

- "lower": `ordered[int(q * (n - 1))]`, the rank rounded down (claim_store, forgetting,
  owner_search, vectors);
- "nearest": `ordered[ceil(q * n) - 1]`, the nearest-rank definition (recall, and turn,
  which reads recall's summary).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "latency_ms",
    "load_line",
    "machine",
    "parse_sizes",
    "percentile",
    "say",
    "timed",
    "write_json",
]

Rank = Literal["lower", "nearest"]
Statistic = Literal["min", "p50", "p95", "p99", "max"]

_QUANTILES: dict[str, float] = {"p95": 0.95, "p99": 0.99}


def say(message: str) -> None:
    """Progress on stderr, so stdout stays the results."""
    print(message, file=sys.stderr, flush=True)


def timed(calls: Sequence[Callable[[], object]]) -> list[float]:
    """Seconds each call took, one after another."""
    samples = []
    for call in calls:
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def percentile(ordered: Sequence[float], q: float, *, rank: Rank) -> float:
    """The `q` quantile (0 < q < 1) of samples sorted ascending, by the rank rule named."""
    index = int(q * (len(ordered) - 1)) if rank == "lower" else math.ceil(q * len(ordered)) - 1
    return ordered[index]


def latency_ms(
    samples: Sequence[float],
    stats: Sequence[Statistic] = ("p50", "p95"),
    *,
    rank: Rank = "lower",
    digits: int | None = None,
) -> dict[str, float]:
    """`{"p50_ms": ..., "p95_ms": ...}` (the `stats` asked for) of samples in seconds; p50 is
    the median, `digits` rounds the milliseconds."""
    ordered = sorted(samples)
    summary = {}
    for stat in stats:
        milliseconds = 1000 * _seconds(ordered, stat, rank)
        summary[f"{stat}_ms"] = milliseconds if digits is None else round(milliseconds, digits)
    return summary


def _seconds(ordered: Sequence[float], stat: Statistic, rank: Rank) -> float:
    if stat == "min":
        return ordered[0]
    if stat == "max":
        return ordered[-1]
    if stat == "p50":
        return statistics.median(ordered)
    return percentile(ordered, _QUANTILES[stat], rank=rank)


def machine(load_before: tuple[float, float, float], **versions: object) -> dict[str, Any]:
    """Where a run was measured: Python, the `versions` given (library -> version), the CPUs
    and platform, and the load average when the run began and now."""
    return {
        "python": platform.python_version(),
        **versions,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        # Other processes on the box disturb every figure; the load says how much.
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


def write_json(
    path: Path | None,
    document: Mapping[str, Any] | Sequence[Any] | None,
    *,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """The results as indented JSON, also written to `path` (when given, its folder made if
    missing) with a final newline; the text is returned for a caller that prints it too."""
    text = json.dumps(document, indent=2, sort_keys=sort_keys, default=default)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    return text


def parse_sizes(parser: argparse.ArgumentParser, text: str, *, minimum: int) -> list[int]:
    """`--sizes`: comma-separated claim counts, each at least `minimum` (else the parser's
    usage error, exit 2)."""
    try:
        sizes = [int(size) for size in text.split(",")]
    except ValueError:
        parser.error(f"--sizes: comma-separated integers, got {text!r}")
    if any(size < minimum for size in sizes):
        parser.error(f"--sizes: each size must be at least {minimum}")
    return sizes


def load_line(document: Mapping[str, Any]) -> str:
    """The report's last line: the load average before and after, and the run's length."""
    machine = document["machine"]
    return (
        f"load {machine['loadavg_before'][0]:.1f} → {machine['loadavg_after'][0]:.1f}; "
        f"total {document['total_seconds']:.0f} s"
    )
