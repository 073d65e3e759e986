"""`agent-memory recall`: the memory_recall path from the command line.

R-HOST-2 (recall, `--json`), R-READ-3/8 (owner+scope candidates, ranked), R-PRIV-2 (no
cross-agent recall), R-SCOPE-1 (missing session context never widens).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_memory_support import HASHING, Cli


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    cli = Cli(tmp_path, capsys, HASHING)
    cli.json("remember", "--agent", "ana", "The user's favourite editor is Helix.")
    cli.json("remember", "--agent", "ana", "The user lives in Berlin.")
    return cli


def test_recall_returns_the_matching_memory_with_scores_and_diagnostics(cli: Cli) -> None:
    """R-READ-3, R-READ-8: the fact is found through both lists, warm (no vectorCold)."""
    document = cli.json("recall", "--agent", "ana", "What is my favourite editor?")

    top = document["items"][0]
    assert top["content"] == "The user's favourite editor is Helix."
    assert top["temporal"] == "timeless"
    assert set(top["sources"]) == {"fts", "vector"}
    assert top["score"] > 0 and top["similarity"] > 0
    assert "vectorCold" not in document["degradations"]
    diagnostics = document["diagnostics"]
    assert diagnostics["outcome"] == "completed"
    assert diagnostics["fts_candidates"] >= 1 and diagnostics["vector_candidates"] >= 1
    assert set(diagnostics["timings"]) >= {"keywords", "query_embedding", "vector", "total"}


def test_another_agent_recalls_nothing(cli: Cli) -> None:
    """R-PRIV-2: no cross-agent recall."""
    assert cli.json("recall", "--agent", "bob", "What is my favourite editor?")["items"] == []


def test_top_k_limits_the_results(cli: Cli) -> None:
    document = cli.json("recall", "--agent", "ana", "--top-k", "1", "The user")

    assert len(document["items"]) == 1


def test_session_scoped_memories_need_their_session(cli: Cli) -> None:
    """R-SCOPE-1: without `--session` a session-scoped claim is not recalled."""
    cli.json(
        "remember", "--agent", "ana", "--scope", "session", "--session", "s9",
        "The user is drafting a cover letter for Globex.",
    )  # fmt: skip

    without = cli.json("recall", "--agent", "ana", "cover letter Globex")
    within = cli.json("recall", "--agent", "ana", "--session", "s9", "cover letter Globex")

    assert "Globex" not in str(without["items"])
    assert within["items"][0]["content"] == "The user is drafting a cover letter for Globex."


def test_text_output_is_a_table(cli: Cli) -> None:
    code, out, _ = cli.run("recall", "--agent", "ana", "editor")

    assert code == 0
    assert out.splitlines()[0] == "Recall for agent ana (1)"
    assert "SCORE" in out and "The user's favourite editor is Helix." in out


def test_an_invalid_top_k_is_exit_2(cli: Cli) -> None:
    code, _, err = cli.run("recall", "--agent", "ana", "--top-k", "0", "editor")

    assert code == 2
    assert "top_k" in err
