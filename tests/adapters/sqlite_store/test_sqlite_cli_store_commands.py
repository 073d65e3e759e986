"""The store commands of the CLI, end to end through the plugin registry (R-HOST-2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_plugins.cli.main import main


def _run(capsys: pytest.CaptureFixture[str], data_dir: Path, *argv: str) -> tuple[int, str]:
    code = main(["--data-dir", str(data_dir), *argv])
    return code, capsys.readouterr().out


def _json(capsys: pytest.CaptureFixture[str], data_dir: Path, *argv: str) -> dict:
    code, out = _run(capsys, data_dir, *argv, "--json")
    assert code == 0, out
    return json.loads(out)


def test_remember_forget_delete_and_replay_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-HOST-2, R-FORGET-1/2, R-WRITE-5: remember prints the id; forget archives; delete
    tombstones; a replay without --user-add is reported suppressed with exit 0."""
    code, out = _run(capsys, tmp_path, "remember", "--agent", "A", "Prefers dark roast")
    claim_id = out.strip()
    assert code == 0 and claim_id.startswith("mem-")
    listed = _json(capsys, tmp_path, "list", "--agent", "A")
    assert [c["id"] for c in listed["claims"]] == [claim_id]
    archived = _json(capsys, tmp_path, "forget", "--agent", "A", claim_id)
    assert archived["claim"]["lifecycle"] == "archived"
    assert _json(capsys, tmp_path, "list", "--agent", "A")["claims"] == []
    assert _json(capsys, tmp_path, "restore", "--agent", "A", claim_id)["claim"]["lifecycle"] == (
        "active"
    )
    assert _json(capsys, tmp_path, "delete", "--agent", "A", claim_id)["tombstones"] == 3
    code, out = _run(capsys, tmp_path, "remember", "--agent", "A", "Prefers  dark roast")
    assert code == 0 and "suppressed" in out
    again = _json(capsys, tmp_path, "remember", "--agent", "A", "--user-add", "Prefers dark roast")
    assert again["status"] == "inserted" and again["released_tombstones"] >= 1


def test_session_scope_clear_retire_and_directives_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-HOST-2, R-SCOPE-1, R-FORGET-3/4, R-DIR-1: `--session` narrows the listing to
    Agent scope plus that session; clear empties the agent and keeps directives; retire
    removes directives too."""
    _run(
        capsys, tmp_path, "remember", "--agent", "A", "--scope", "session", "--session", "s1", "x1"
    )
    _run(capsys, tmp_path, "remember", "--agent", "A", "agent wide fact")
    assert len(_json(capsys, tmp_path, "list", "--agent", "A")["claims"]) == 2  # management
    assert len(_json(capsys, tmp_path, "list", "--agent", "A", "--session", "s1")["claims"]) == 2
    assert len(_json(capsys, tmp_path, "list", "--agent", "A", "--session", "s2")["claims"]) == 1
    code, _ = _run(capsys, tmp_path, "remember", "--agent", "A", "--scope", "session", "x2")
    assert code == 2  # --scope session without --session is a user error
    added = _json(capsys, tmp_path, "directive", "add", "--agent", "A", "Answer in English")
    assert added["directive"]["status"] == "active"
    draft = _json(capsys, tmp_path, "directive", "suggest", "--agent", "A", "Use bullet points")
    approved = _json(
        capsys, tmp_path, "directive", "approve", "--agent", "A", draft["directive"]["id"]
    )
    assert approved["directive"]["status"] == "active"
    code, _ = _run(capsys, tmp_path, "directive", "add", "--agent", "A", "x", "--topic", "中")
    assert code == 2
    cleared = _json(capsys, tmp_path, "clear", "--agent", "A")
    assert cleared["removed"] == 2
    assert _json(capsys, tmp_path, "list", "--agent", "A", "--all")["claims"] == []
    assert len(_json(capsys, tmp_path, "directive", "list", "--agent", "A")["directives"]) == 2
    _json(capsys, tmp_path, "retire", "--agent", "A")
    assert _json(capsys, tmp_path, "directive", "list", "--agent", "A")["directives"] == []
