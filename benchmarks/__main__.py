"""`python -m benchmarks` lists the benchmarks; `python -m benchmarks NAME [OPTIONS]` runs one.

    python -m benchmarks                   # what exists
    python -m benchmarks recall --quick    # = python -m benchmarks.recall --quick

Each benchmark is a module of this package with `main(argv) -> int`; every one accepts
`--quick` and `--json PATH`. `agent-memory benchmark` delegates here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["BENCHMARKS", "load", "main", "run"]

# name -> what it measures (the module is benchmarks.<name>)
BENCHMARKS: dict[str, str] = {
    "recall": "full recall path vs numpy exact scan, bare FTS5 and the bandwidth bound "
    "(10k/100k/1M claims)",
    "vectors": "vector store exact top-10 vs numpy, DuckDB SQL and the bandwidth bound "
    "(10k/100k/1M vectors)",
    "claim_store": "claim-store insert throughput, FTS latency and forgetting vs bare FTS5 "
    "(10k/100k claims per agent)",
    "turn": "prepare_turn p50/p95 vs bare FTS5 + numpy exact scan on a mixed query set "
    "(10k/100k claims per agent, 10 other agents)",
    "cold_start": "a fresh process from import to its first turn, step by step, and its "
    "resident memory against the raw matrix (100k claims)",
    "turn_soak": "turns of 20 agents x 2,000 under ingestion, forget, clear and a foreign "
    "SQLite lock holder: 0 past the deadline + 1 s, 0 lost anchors",
    "maintenance_soak": "20 agents x 2,000 turns with maintenance stopped/started at random "
    "and one SIGKILL: 0 escaping errors, FTS/vector/lineage integrity, no starved seed",
    "forgetting": "one delete made physical at 10k/100k/1M rows and every clear batch when "
    "the agent holds 90 % of the store, vs bare SQLite deletes",
    "ingestion": "claims/s from a tape to embedded claims, bulk and turn by turn, vs the "
    "embedder batched on the same claim texts",
}


def load(name: str) -> ModuleType:
    """The benchmark's module; KeyError for an unknown name."""
    if name not in BENCHMARKS:
        raise KeyError(name)
    return importlib.import_module(f"{__package__ or 'benchmarks'}.{name}")


def run(name: str, argv: Sequence[str] = ()) -> int:
    """Run one benchmark with its own command-line options; its exit code."""
    return int(load(name).main(list(argv)) or 0)


def _listing() -> str:
    width = max(len(name) for name in BENCHMARKS)
    lines = ["benchmarks (python -m benchmarks NAME [--quick] [--json PATH]):"]
    lines += [f"  {name:<{width}}  {text}" for name, text in BENCHMARKS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "list"):
        print(_listing())
        return 0
    name, rest = args[0], args[1:]
    if name not in BENCHMARKS:
        print(f"unknown benchmark {name!r}\n{_listing()}", file=sys.stderr)
        return 2
    return run(name, rest)


if __name__ == "__main__":
    sys.exit(main())
