"""The CLI's forgetting commands, tried as a user would: one door, the service's.

`agent-memory remember` embeds what it stores and `agent-memory delete` removes the claim,
its FTS trace and its vector — nothing of the text stays in any file of the data directory
(R-FORGET-1, R-PRIV-3, R-HOST-2). `agent-memory clear` is the API's clear, not a copy of it.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from cli_memory_support import HASHING, Cli

from memory_core.ports.claims import ClearPhase
from memory_core.services.memory import ClearListener, ClearProgress, ClearResult, MemoryService

AGENT = "ana"
# Letters no other text of the test shares, so a hit can only be this claim's.
MARKER = "zqxvbwkjhgfd"
CONTENT = f"The user keeps the spare key under the {MARKER} flowerpot."


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path, capsys, HASHING)


def _vector_ids(data_dir: Path) -> set[str]:
    """The claim ids of every row in the data dir's DuckDB vector files."""
    ids: set[str] = set()
    for path in sorted(data_dir.rglob("*.v2.duckdb")):
        conn = duckdb.connect(str(path), read_only=True)
        try:
            ids |= {
                row[0] for row in conn.execute("SELECT memory_id FROM memory_vector").fetchall()
            }
        finally:
            conn.close()
    return ids


def _files_holding(data_dir: Path, needle: str) -> list[str]:
    """Every file under `data_dir` whose bytes contain `needle` (WAL and journals too)."""
    return sorted(
        str(path.relative_to(data_dir))
        for path in data_dir.rglob("*")
        if path.is_file() and needle.encode() in path.read_bytes()
    )


def test_delete_through_the_cli_leaves_no_vector_and_no_plaintext(cli: Cli) -> None:
    """R-FORGET-1, R-PRIV-3, R-HOST-2: remember embeds the claim into the agent's vector
    file; delete removes the row, its vector and every byte of its text from the data dir."""
    kept = cli.json("remember", "--agent", AGENT, "The user drinks green tea.")["claim"]["id"]
    remembered = cli.json("remember", "--agent", AGENT, CONTENT)
    claim_id = remembered["claim"]["id"]
    # The controls: the scans below can fail — the vector and the text are there now.
    assert {claim_id, kept} <= _vector_ids(cli.data_dir)
    assert _files_holding(cli.data_dir, MARKER)

    deleted = cli.json("delete", "--agent", AGENT, claim_id)

    assert deleted == {"deleted": claim_id, "tombstones": deleted["tombstones"]}
    assert deleted["tombstones"] >= 1
    assert _vector_ids(cli.data_dir) == {kept}
    assert _files_holding(cli.data_dir, MARKER) == []
    assert _files_holding(cli.data_dir, CONTENT) == []
    listed = cli.json("list", "--agent", AGENT, "--all")["claims"]
    assert [claim["id"] for claim in listed] == [kept]


def test_the_cli_clear_is_the_services_clear(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-FORGET-3, R-HOST-2: `agent-memory clear` runs `MemoryService.clear` — the API's one
    code path — and prints what it reports, batch by batch."""
    calls: list[str] = []

    async def clear(
        self: MemoryService, agent_id: str, *, progress: ClearListener | None = None
    ) -> ClearResult:
        calls.append(agent_id)
        assert progress is not None
        progress(ClearProgress(agent_id=agent_id, phase=ClearPhase.CLAIMS, removed_count=3,
                               batch_removed=3))  # fmt: skip
        done = ClearResult(
            agent_id=agent_id, phase=ClearPhase.DONE, removed_count=3, vectors_dropped=False
        )
        progress(done)
        return done

    monkeypatch.setattr(MemoryService, "clear", clear)

    document = cli.json("clear", "--agent", AGENT)

    assert calls == [AGENT]
    assert document == {"agent": AGENT, "removed": 3, "batches": [3], "vectors": "deferred"}


def test_clear_through_the_cli_drops_the_agents_vectors(cli: Cli) -> None:
    """R-FORGET-3: the real clear empties the agent's claims and its vector namespace."""
    cli.json("remember", "--agent", AGENT, CONTENT)
    assert _vector_ids(cli.data_dir)

    document = cli.json("clear", "--agent", AGENT)

    assert document["removed"] >= 1 and document["vectors"] == "dropped"
    assert _vector_ids(cli.data_dir) == set()
    assert _files_holding(cli.data_dir, MARKER) == []
