"""`agent-memory benchmark`: the benchmarks of the source tree, run through the CLI.

R-BEYOND-3 (recall latency next to the bandwidth bound and plain baselines, in one run),
R-HOST-2 (`benchmark` among the commands, `--json`). A smoke test at a tiny size: it checks
the report's shape and that every ratio is computed from figures of the same run — never a
timing threshold, which a shared machine would make flaky.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from memory_plugins.cli import benchmark_cmd
from memory_plugins.cli.main import main

RESULTS = benchmark_cmd.SOURCE_ROOT / "benchmarks" / "results" / "recall.json"
STAGES = {"keywords", "query_embedding", "vector", "revalidation", "assembly", "other", "total"}


def _json(capsys: pytest.CaptureFixture[str], *args: str, expect: int = 0) -> Any:
    code = main(["--json", *args])
    captured = capsys.readouterr()
    assert code == expect, (code, captured.out, captured.err)
    return json.loads(captured.out)


@pytest.fixture(scope="module")
def recall_report() -> dict[str, Any]:
    """One tiny recall run (2,000 claims, 3 queries), shared by the checks below."""
    before = RESULTS.stat().st_mtime_ns if RESULTS.exists() else None
    out, err = io.StringIO(), io.StringIO()
    # Module-scoped (capsys is per test): stdout and stderr captured by hand.
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            ["--json", "benchmark", "recall", "--quick", "--sizes", "2000", "--queries", "3"]
        )
    assert code == 0, (out.getvalue(), err.getvalue())
    # The benchmark's own table went to stderr, stdout is the one document.
    assert "ours/np" in err.getvalue()
    after = RESULTS.stat().st_mtime_ns if RESULTS.exists() else None
    # A smoke run never overwrites the published figures.
    assert before == after
    return json.loads(out.getvalue())


def test_benchmark_lists_what_exists(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(capsys, "benchmark")
    names = {entry["name"] for entry in document["benchmarks"]}
    assert {"recall", "vectors", "claim_store"} <= names


def test_an_unknown_benchmark_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(capsys, "benchmark", "no-such-bench", expect=2)
    assert "unknown benchmark" in document["error"]["message"]


def test_without_the_source_tree_the_command_says_why(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """From an installed wheel there is no benchmarks/ folder: a clear error, exit 2."""
    monkeypatch.setattr(benchmark_cmd, "SOURCE_ROOT", tmp_path)
    document = _json(capsys, "benchmark", "recall", expect=2)
    assert document["error"]["type"] == "ConfigError"
    assert "source checkout" in document["error"]["message"]


def test_recall_report_has_every_baseline_for_each_size(recall_report: dict[str, Any]) -> None:
    assert recall_report["benchmark"] == "recall"
    assert recall_report["bandwidth"]["copy_gb_s"] > 0
    [result] = recall_report["results"]
    assert result["n"] == 2000 and result["queries"] == 3
    assert result["noise_agents"] == 10 and result["store_rows"] > result["n"]
    for key in ("ours", "numpy", "numpy_hot", "bare_fts5"):
        stats = result[key]
        assert 0 < stats["min_ms"] <= stats["p50_ms"] <= stats["p95_ms"], key
    assert set(result["stages_p50_ms"]) == STAGES
    assert all(value >= 0 for value in result["stages_p50_ms"].values())
    assert set(result["other_probes_p50_ms"]) == {
        "fts_search",
        "fts_revalidation",
        "fence_and_directives",
        "access",
    }
    # The measured path really went through both sources.
    assert result["counts_median"]["vector_candidates"] > 0
    assert result["counts_median"]["fts_candidates"] > 0
    assert result["counts_median"]["items"] > 0


def test_every_ratio_comes_from_figures_of_the_same_run(recall_report: dict[str, Any]) -> None:
    copy_gb_s = recall_report["bandwidth"]["copy_gb_s"]
    for result in recall_report["results"]:
        bound = result["bandwidth_bound_ms"]
        assert bound == pytest.approx(1000 * result["n"] * 384 * 4 / (copy_gb_s * 1e9))
        ours = result["ours"]["p50_ms"]
        numpy_ms = result["numpy"]["p50_ms"]
        hot = result["numpy_hot"]["p50_ms"]
        fts = result["bare_fts5"]["p50_ms"]
        expected = {
            "ours_vs_numpy": ours / numpy_ms,
            "ours_vs_numpy_hot": ours / hot,
            "ours_vs_bound": ours / bound,
            "ours_vs_bare_fts5": ours / fts,
            "ours_vs_numpy_plus_fts5": ours / (numpy_ms + fts),
            "numpy_vs_bound": numpy_ms / bound,
            "numpy_hot_vs_bound": hot / bound,
        }
        assert result["ratios"] == pytest.approx(expected)
