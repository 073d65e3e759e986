"""`agent-memory history CLAIM_ID --agent A` (R-LINEAGE-1, R-HOST-2): the lineage edges a
manual edit wrote, through the facade, in text and JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_memory_support import HASHING, Cli

from memory_plugins.api import SyncMemory

A = "agent-a"


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path, capsys, HASHING)


def test_history_shows_the_edge_of_a_manual_edit(cli: Cli) -> None:
    """R-LINEAGE-1: the edited claim's history names its parent, the edge kind, the child."""
    old = cli.json("remember", "--agent", A, "The user lives in Porto.")["claim"]["id"]
    with SyncMemory(cli.data_dir, config=cli.config) as memory:
        new = memory.update(A, old, "The user lives in Braga.").id

    document = cli.json("history", old, "--agent", A)

    assert document["claim"]["superseded_by"] == new
    assert [(e["parent_id"], e["kind"], e["child_id"]) for e in document["derivations"]] == [
        (old, "manual_edit", new)
    ]
    assert ("memory/manual_edit", old) in [(e["event"], e["memory_id"]) for e in document["audit"]]
    code, out, _ = cli.run("history", new, "--agent", A)
    assert code == 0
    assert "The user lives in Braga." in out and "manual_edit" in out and old in out
    assert "successor_id=" in out  # the audit table: ids, never text
    assert "Porto" not in out  # an ancestor is named by id, never quoted


def test_history_of_an_unknown_claim_is_a_user_error(cli: Cli) -> None:
    """R-HOST-2: a typed NotFound is one line and exit code 2, not a traceback."""
    code, _, err = cli.run("history", "mem-0000000000000000", "--agent", A)
    assert code == 2
    assert "Traceback" not in err and err.strip()
