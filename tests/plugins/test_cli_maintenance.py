"""`agent-memory maintenance run|status` and `agent-memory audit`, tried as a user would
(R-HOST-2, R-MAINT-1, R-LINEAGE-1, R-FORGET-1): two rewordings of one fact become one live
claim, the trail says why, and forgetting the survivor suppresses both texts."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_memory_support import HASHING, Cli

CALLED, NAMED = "The user's cat is called Miso.", "The user's cat is named Miso."
# The hashing embedder scores the two rewordings near 0.8 (the local model near 0.95).
LOOSE = HASHING + "\n[settings]\nmerge_similarity_threshold = 0.5\n"


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path, capsys, LOOSE)


def test_a_pass_merges_two_rewordings_and_delete_forgets_both(cli: Cli) -> None:
    cli.json("remember", "--agent", "A", CALLED)
    cli.json("remember", "--agent", "A", NAMED)

    report = cli.json("maintenance", "run", "--agent", "A", "--heavy")

    assert (report["mode"], report["merged"], report["skipped"]) == ("cheap", 1, "missing-model")
    (live,) = cli.json("list", "--agent", "A")["claims"]
    assert live["content"] == NAMED
    events = cli.json("audit", "--agent", "A")["events"]
    merge = next(e for e in events if e["event"] == "memory/merge")
    assert merge["memory_id"] == live["id"] and "retired" in merge["refs"]
    status = cli.json("maintenance", "status", "--agent", "A")
    assert status["last_passes"][0]["refs"]["merged"] == 1
    cli.json("delete", "--agent", "A", live["id"])
    for text in (CALLED, NAMED):
        assert cli.json("remember", "--agent", "A", text)["status"] == "suppressed", text
