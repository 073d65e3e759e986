"""Cursors per (agent, session) (R-WRITE-1): the CLI `ingest` of one tape by two agents, and
the schema-v5 migration of cursors written when they were keyed by session only."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from memory_adapters.sqlite_store import ApswClaimStore
from memory_adapters.sqlite_store.cursors import SqliteCursorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, ClaimSource, WriteOrigin
from memory_core.domain.secrets import PatternSecretPolicy
from memory_plugins.cli.main import main

REPLY = (
    "Thanks for telling me, I will keep that in mind. Is there anything else I can help you "
    "with today, for example planning, writing, or questions about one of your projects?"
)


def test_cli_ingest_of_one_tape_extracts_it_for_each_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-WRITE-1: the second agent's run is not `nothing-new` because of the first's."""
    tape = tmp_path / "chat.jsonl"
    messages = [("user", "I moved to Lisbon last year."), ("assistant", REPLY)]
    tape.write_text(
        "".join(
            json.dumps({"id": f"m{n}", "session": "s1", "order_seq": n, "role": r, "content": c})
            + "\n"
            for n, (r, c) in enumerate(messages, start=1)
        ),
        encoding="utf-8",
    )
    config = tmp_path / "config.toml"
    config.write_text('[plugins.embedding_provider]\nname = "hashing"\n', encoding="utf-8")
    base = ["--data-dir", str(tmp_path / "data"), "--config", str(config), "--json"]
    for agent in ("ana", "bob"):
        assert main([*base, "ingest", "--agent", agent, str(tape)]) == 0
        document = json.loads(capsys.readouterr().out)
        assert [s["outcome"] for s in document["sessions"]] == ["completed"], agent
        assert [v["content"] for v in document["stored"]] == ["The user lives in Lisbon."]


def test_session_keyed_cursors_move_to_the_agents_that_extracted_them(tmp_path: Path) -> None:
    """R-WRITE-1, R-STORE-1: a v4 file's cursor row goes to each agent holding claims from
    that session; an agent without any starts the session from the beginning."""
    path, clock = tmp_path / "memory.sqlite3", ManualClock()
    store = ApswClaimStore(path, clock=clock, secret_policy=PatternSecretPolicy())
    for agent in ("ana", "cy"):
        store.insert(
            ClaimDraft(
                agent_id=agent,
                kind="semantic",
                content=f"{agent} lives in Lisbon.",
                source=ClaimSource(session_id="s1"),
            ),
            origin=WriteOrigin.EXTRACTION,
            now=clock.now(),
        )
    store.close()
    raw = apsw.Connection(str(path))
    # Back to schema v4: the session-keyed table with one cursor per session.
    raw.execute("DROP TABLE agent_memory_extract_cursor")
    raw.execute("DELETE FROM agent_memory_schema WHERE version >= 5")
    raw.execute(
        """CREATE TABLE agent_memory_cursor (session_id TEXT PRIMARY KEY,
             order_seq INTEGER NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID"""
    )
    raw.execute("INSERT INTO agent_memory_cursor VALUES ('s1', 7, 0), ('s2', 3, 0)")
    raw.close()

    cursors = SqliteCursorStore(path, clock=clock)
    assert [cursors.get(agent, "s1") for agent in ("ana", "cy", "bob")] == [7, 7, 0]
    assert cursors.get("ana", "s2") == 0  # nobody holds claims from s2: it is re-extracted
    cursors.close()
    raw = apsw.Connection(str(path))
    tables = {n for (n,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "agent_memory_cursor" not in tables
    raw.close()
