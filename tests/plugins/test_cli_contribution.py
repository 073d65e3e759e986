"""`agent-memory contribution`: both blocks of a turn and its manifest.

R-HOST-2 (show the contribution and manifest, `--json`), R-READ-1/5/6 (contribution,
budget, separate blocks), R-DIR-1 (only active directives are placed), R-FORGET-1
(diagnostics carry no content).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_memory_support import HASHING, Cli

FACT = "The user is allergic to peanuts."


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    cli = Cli(tmp_path, capsys, HASHING)
    cli.json("remember", "--agent", "ana", FACT)
    return cli


def test_json_has_both_blocks_the_manifest_and_content_free_diagnostics(cli: Cli) -> None:
    """R-READ-1, R-READ-6: the memory block holds the fact inside `<context-data>`; the
    diagnostics (timings, candidate counts, degradations) hold ids and numbers only."""
    cli.json("directive", "add", "--agent", "ana", "Answer in German.")
    document = cli.json("contribution", "--agent", "ana", "Any snack ideas with peanuts?")

    assert document["outcome"] == "assembled"
    memory_text = document["memory_text"]
    assert FACT in memory_text
    assert memory_text.index("<context-data") < memory_text.index(FACT)
    assert "Answer in German." in document["directive_text"]
    assert "Answer in German." not in memory_text
    summary = document["summary"]
    assert 0 < summary["tokens_used"] <= summary["token_budget"] == 1200
    assert [d["kind"] for d in summary["directives"]] == ["instruction"]
    diagnostics = document["diagnostics"]
    assert set(diagnostics["timings"]) >= {"keywords", "query_embedding", "vector", "total"}
    assert diagnostics["candidates"]["fts_candidates"] >= 1
    assert diagnostics["degradations"] == []
    for part in ("diagnostics", "manifest", "summary"):
        text = json.dumps(document[part])
        assert "peanut" not in text and "German" not in text, part


def test_a_draft_directive_is_not_placed(cli: Cli) -> None:
    """R-DIR-1: a suggestion stays a draft and never reaches the directive block."""
    cli.json("directive", "suggest", "--agent", "ana", "Answer in haiku.")

    document = cli.json("contribution", "--agent", "ana", "hello")

    assert document["directive_text"] is None


def test_budget_bounds_the_contribution(cli: Cli) -> None:
    """R-READ-5: `--budget` is the turn's total; the assembly stays within it."""
    for n in range(12):
        cli.json("remember", "--agent", "ana", f"The user's project number {n} is called Nova{n}.")

    document = cli.json(
        "contribution", "--agent", "ana", "--budget", "120", "Tell me about my projects."
    )

    summary = document["summary"]
    assert summary["token_budget"] == 120
    assert summary["tokens_used"] <= 120


def test_text_output_prints_both_blocks_and_the_manifest(cli: Cli) -> None:
    code, out, _ = cli.run("contribution", "--agent", "ana", "Any snack ideas?")

    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Memory block"
    assert "Directive block" in lines
    assert "  (empty)" in lines  # no directive yet
    [manifest] = [line for line in lines if line.startswith("Manifest: ")]
    assert "/ 1200" in manifest
    assert FACT in out


def test_an_agent_without_memories_gets_an_empty_contribution(cli: Cli) -> None:
    """R-READ-1: nothing to contribute is an empty outcome, not an error."""
    document = cli.json("contribution", "--agent", "nobody", "hello")

    assert document["outcome"] == "empty"
    assert document["memory_text"] is None and document["directive_text"] is None
