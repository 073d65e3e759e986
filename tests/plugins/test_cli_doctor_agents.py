"""`agent-memory doctor` checks every agent in the data dir, not only those named with
`--agent`: a vector namespace that cannot be opened (here a file overwritten with garbage)
is reported as a failure either way (issue 11, R-HOST-2, R-VEC-3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_memory_support import HASHING, Cli


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path, capsys, HASHING)


def test_a_broken_namespace_of_an_agent_not_named_is_reported(cli: Cli, tmp_path: Path) -> None:
    for agent in ("ana", "bob"):
        cli.json("remember", "--agent", agent, f"{agent} likes green tea.")
        cli.json("recall", "--agent", agent, "tea")  # embeds and warms
    (bob,) = [path for path in tmp_path.rglob("bob*.duckdb") if path.is_file()]
    bob.write_bytes(b"not a duckdb file" * 4096)

    document = cli.json("doctor", expect=3)

    assert document["healthy"] is False
    assert [agent["agent"] for agent in document["agents"]] == ["ana", "bob"]
    checks = {check["name"]: check["status"] for check in document["checks"]}
    assert checks["agent ana"] == "ok"
    assert checks["agent bob"] == "fail"
