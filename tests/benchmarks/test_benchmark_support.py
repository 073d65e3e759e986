"""benchmarks/support.py: the latency summary every benchmark reports, and its results file.

The two percentile rank rules stay distinct so figures remain comparable with the runs
documented before the shared module (R-BEYOND-3: the baseline beside ours, same run)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from benchmarks.support import (
    latency_ms,
    load_line,
    machine,
    parse_sizes,
    percentile,
    write_json,
)

# 1..20 ms, shuffled: the summary must sort before it reads ranks.
SAMPLES = [
    s / 1000 for s in (7, 3, 20, 1, 15, 9, 11, 2, 18, 5, 13, 4, 16, 8, 6, 19, 10, 14, 12, 17)
]


@pytest.mark.parametrize(
    ("rank", "q", "expected"),
    [("lower", 0.95, 19.0), ("nearest", 0.95, 19.0), ("lower", 0.5, 10.0), ("nearest", 0.99, 20.0)],
)
def test_percentile_reads_the_rank_its_rule_names(rank: str, q: float, expected: float) -> None:
    ordered = sorted(1000 * s for s in SAMPLES)
    assert percentile(ordered, q, rank=rank) == expected  # type: ignore[arg-type]


def test_the_two_rank_rules_differ_where_the_rank_is_fractional() -> None:
    ordered = [float(i) for i in range(1, 31)]
    # int(0.95 * 29) = 27 -> 28.0; ceil(0.95 * 30) - 1 = 28 -> 29.0
    assert percentile(ordered, 0.95, rank="lower") == 28.0
    assert percentile(ordered, 0.95, rank="nearest") == 29.0


def test_latency_summary_is_milliseconds_of_the_stats_asked_for() -> None:
    summary = latency_ms(SAMPLES, ("min", "p50", "p95", "max"))
    assert summary == pytest.approx({"min_ms": 1.0, "p50_ms": 10.5, "p95_ms": 19.0, "max_ms": 20.0})
    assert latency_ms([0.0012345], digits=2) == {"p50_ms": 1.23, "p95_ms": 1.23}


def test_results_are_written_with_a_final_newline_and_returned(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.json"
    text = write_json(target, {"b": 1, "a": 2}, sort_keys=True)
    assert target.read_text(encoding="utf-8") == text + "\n"
    assert list(json.loads(text)) == ["a", "b"]
    assert write_json(None, [1]) == "[\n  1\n]"


def test_machine_names_the_versions_given_and_the_load_around_the_run() -> None:
    described = machine((1.0, 2.0, 3.0), numpy="2.0")
    assert described["numpy"] == "2.0"
    assert described["loadavg_before"] == (1.0, 2.0, 3.0)
    assert len(described["loadavg_after"]) == 3


def test_sizes_are_comma_separated_counts_of_at_least_the_minimum(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser(prog="bench")
    assert parse_sizes(parser, "100,2000", minimum=100) == [100, 2000]
    for text, says in (("100,x", "comma-separated integers"), ("99", "at least 100")):
        with pytest.raises(SystemExit) as exited:
            parse_sizes(parser, text, minimum=100)
        assert exited.value.code == 2
        assert says in capsys.readouterr().err


def test_the_load_line_gives_the_load_before_and_after_and_the_length() -> None:
    document = {"machine": machine((1.25, 0.0, 0.0)), "total_seconds": 41.6}
    document["machine"]["loadavg_after"] = (2.04, 0.0, 0.0)
    assert load_line(document) == "load 1.2 → 2.0; total 42 s"
