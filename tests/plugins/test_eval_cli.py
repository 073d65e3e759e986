"""`agent-memory eval behaviour|retrieval|locomo`: tables, JSON, the report file, exit codes.

R-BEYOND-2 (an evaluation command printing a table and writing JSON), R-HOST-2 (`--json`).
The hashing embedder keeps the retrieval and LoCoMo runs fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_plugins.cli.main import main

FIXTURES = Path(__file__).parents[1] / "fixtures"
DEEPCHAT_BEHAVIOUR = FIXTURES / "deepchat" / "behavior-v1.json"
LOCOMO = FIXTURES / "locomo-synthetic.json"


def test_behaviour_prints_scenarios_and_axes_and_writes_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-BEYOND-2: a passing fixture exits 0, shows per-scenario and per-axis results, and
    leaves a JSON report under the data directory."""
    code = main(["eval", "behaviour", str(DEEPCHAT_BEHAVIOUR), "--data-dir", str(tmp_path)])

    out = capsys.readouterr().out
    assert code == 0
    assert "explicit-delete-removes-claim" in out
    assert "PASSED: 6/6 scenarios" in out
    [report] = (tmp_path / "eval").glob("behaviour-*.json")
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["passed"] is True
    assert [a["axis"] for a in document["fixtures"][0]["axes"]] == [
        "carry_forward",
        "preference_directive",
        "temporal",
        "correction_forgetting",
    ]


def test_a_failing_scenario_exits_1_and_names_the_expectation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-BEYOND-2: a scenario whose expectation fails makes the command exit 1; the JSON
    document names the failed expectation."""
    document = json.loads(DEEPCHAT_BEHAVIOUR.read_text(encoding="utf-8"))
    document["scenarios"][1]["expected"]["selectedMemoryIds"] = ["unrelated-preference"]
    document["scenarios"][1]["expected"]["excludedMemoryIds"] = []
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document), encoding="utf-8")
    report = tmp_path / "out" / "report.json"

    code = main(["eval", "behaviour", str(broken), "--json", "--report", str(report)])

    printed = json.loads(capsys.readouterr().out)
    assert code == 1
    assert printed["passed"] is False
    assert printed["report"] == str(report)
    failed = [s for s in printed["fixtures"][0]["scenarios"] if not s["passed"]]
    assert [s["id"] for s in failed] == ["preference-query-recall"]
    assert failed[0]["failures"][0].startswith("selectedMemoryIds:")
    assert json.loads(report.read_text(encoding="utf-8"))["passed"] is False


def test_retrieval_reports_modes_and_gates_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-BEYOND-2: `eval retrieval --json` gives every mode's metrics and the gates; the
    exit code follows the gates."""
    corpus = [
        {"id": f"{a}-{n}", "agentId": a, "kind": "semantic", "content": c, "importance": 0.5}
        for a in ("alpha", "beta")
        for n, c in enumerate(["The helper resolveCacheKey is pure.", "Lunch is at noon."])
    ]
    queries = [
        {
            "id": "q1",
            "agentId": "alpha",
            "text": "resolveCacheKey",
            "subsets": ["code"],
            "relevantIds": ["alpha-0"],
        }
    ]
    fixture = tmp_path / "retrieval.json"
    fixture.write_text(json.dumps({"version": 1, "corpus": corpus, "queries": queries}), "utf-8")

    options = ["--embedder", "hashing", "--json", "--scoring", "rrf_k=5"]
    code = main(["eval", "retrieval", str(fixture), *options, "--data-dir", str(tmp_path)])

    printed = json.loads(capsys.readouterr().out)
    assert [m["mode"] for m in printed["modes"]] == ["fts", "lexical", "vector", "hybrid"]
    assert printed["scoring"]["rrf_k"] == 5
    assert all(m["leaks"] == 0 for m in printed["modes"])
    assert code == (0 if printed["passed"] else 1)
    assert printed["passed"] is True  # one code query, found first everywhere
    assert "queries" not in printed  # per-query rankings stay in the report file
    saved = json.loads(Path(printed["report"]).read_text(encoding="utf-8"))
    assert saved["queries"][0]["ranking"][0] == "alpha-0"


def test_locomo_prints_the_metric_and_category_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-BEYOND-2: `eval locomo` prints R@k, all@10, MRR@50 and the per-category table."""
    options = ["--embedder", "hashing", "--categories", "4"]
    code = main(["eval", "locomo", str(LOCOMO), *options, "--data-dir", str(tmp_path)])

    out = capsys.readouterr().out.lower()
    assert "mrr@50" in out
    assert "4 single-hop" in out
    assert "multi-hop" not in out
    [report] = (tmp_path / "eval").glob("locomo-*.json")
    document = json.loads(report.read_text(encoding="utf-8"))
    assert code == (0 if document["passed"] else 1)
    assert document["categories"] == [4]
    assert document["modes"][0]["questions"] == 3  # the fourth single-hop has no evidence


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "retrieval", "a.json", "b.json"], "exactly one FILE"),
        (["eval", "locomo", "x.json", "--categories", "1,9"], "categories are 1..5"),
        (["eval", "retrieval", "x.json", "--scoring", "rrf_k"], "expected KEY=VALUE"),
        (["eval", "behaviour", "missing.json"], "cannot read"),
    ],
)
def test_bad_arguments_are_user_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """R-HOST-2: a mistake the user can fix is one line on stderr and exit code 2."""
    code = main([*argv, "--data-dir", str(tmp_path)])

    assert code == 2
    assert message in capsys.readouterr().err


def test_locomo_takes_conversations_and_an_exclude_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-BEYOND-2: `--conversations` picks samples, `--exclude FILE` skips the questions it
    names; the table shows R@1, sess@10 and the latency columns; an unknown sample or a
    malformed exclude line is a user error naming it."""
    exclude = tmp_path / "exclude.txt"
    exclude.write_text("synthetic-1:1\n", encoding="utf-8")
    options = ["--embedder", "hashing", "--conversations", "synthetic-1", "--exclude", str(exclude)]
    code = main(["eval", "locomo", str(LOCOMO), *options, "--data-dir", str(tmp_path)])

    out = capsys.readouterr().out.lower()
    assert "r@1" in out and "sess@10" in out and "p95 ms" in out
    assert "1 excluded" in out
    [report] = (tmp_path / "eval").glob("locomo-*.json")
    document = json.loads(report.read_text(encoding="utf-8"))
    assert code == (0 if document["passed"] else 1)
    assert document["excluded_questions"] == 1

    code = main(
        ["eval", "locomo", str(LOCOMO), "--conversations", "conv-9", "--data-dir", str(tmp_path)]
    )
    assert code == 2
    assert "no sample named conv-9" in capsys.readouterr().err
    exclude.write_text("question 1\n", encoding="utf-8")
    code = main(
        ["eval", "locomo", str(LOCOMO), "--exclude", str(exclude), "--data-dir", str(tmp_path)]
    )
    assert code == 2
    assert "exclude.txt:1" in capsys.readouterr().err
