"""`agent-memory demo` end to end: with the hashing embedder and with the default MiniLM.

R-HOST-2 (an offline demo on the embedded default), R-TIME-2 (a cancelled trip reads
"previously planned"), R-DIR-1/2 (a draft until the user approves; then suppressed),
R-FORGET-1 (the deleted fact stays gone on replay), R-PRIV-1 / R-BEYOND-1 (the pasted API
key is in no file under the data directory).
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path

import pytest

from memory_adapters.clocks import MonotonicClock
from memory_adapters.tapes import JsonlTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_plugins.cli.main import main
from memory_plugins.demo import scenario

API_KEY = "sk-proj-Zq8xV3nL5tR7wY9aB2cD4eF6gH8jK0mN1pQ3"  # pasted in s1-paris


def run_demo(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["demo", *args])
    return code, capsys.readouterr().out


def files_under(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


def test_demo_with_the_hashing_embedder_keeps_every_promise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole story as one JSON document; the kept data directory holds no API key."""
    data = tmp_path / "demo"
    code, out = run_demo(capsys, "--offline-embedder", "hashing", "--json", "--data-dir", str(data))

    assert code == 0
    document = json.loads(out)
    assert document["ok"] is True and document["kept"] is True
    assert document["embedder"].startswith("hashing")
    assert [s["session"] for s in document["sessions"]] == list(scenario.SESSION_DATES)
    assert {s["summary"]["outcome"] for s in document["sessions"]} == {"completed"}

    extracted = {view["content"]: view for view in document["extracted"]}
    assert extracted["The user lives in Berlin."]["status"] == "active"
    assert extracted["The user lives in Paris."]["status"] == "superseded"
    cancelled = extracted["The user had planned a trip to Lisbon but cancelled it."]
    assert cancelled["temporal"] == "previously planned"

    assert document["drafts"] == ["Do not bring up the user's divorce."]
    assert document["approved"] == "Do not bring up the user's divorce."
    assert [turn["message"] for turn in document["turns"]] == list(scenario.QUESTIONS)
    for turn in document["turns"]:
        assert "divorce" not in turn["memory_text"]
        assert "Do not bring up the user's divorce." in turn["directive_text"]
        assert turn["manifest"]["tokens_used"] <= turn["manifest"]["token_budget"]
        reasons = {item["reason"] for item in turn["manifest"]["dropped"]}
        assert "suppressed" in reasons
    assert "The user lives in Berlin." in document["turns"][0]["memory_text"]

    forget = document["forget"]
    assert forget["claim"]["content"] == scenario.FORGET_CONTENT
    assert scenario.FORGET_CONTENT in forget["recalled_before"]
    assert scenario.FORGET_CONTENT not in forget["recalled_after"]
    assert forget["replay"]["suppressed"] == 1
    assert forget["back_after_replay"] is False

    assert document["privacy"]["files_with_secret"] == []
    assert document["privacy"]["secrets_shared"] == 1
    files = files_under(data)
    assert files, "the kept data directory is empty"
    for path in files:
        assert API_KEY.encode() not in path.read_bytes(), path


def test_demo_with_the_default_minilm_prints_the_story_as_plain_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The embedded default (local MiniLM, DuckDB, SQLite), piped: no colour codes."""
    data = tmp_path / "demo"
    code, out = run_demo(capsys, "--data-dir", str(data))

    assert code == 0
    assert "embedder: local all-MiniLM-L6-v2" in out
    assert "\x1b[" not in out
    lines = out.splitlines()
    assert "  approved: Do not bring up the user's divorce.  (by the user)" in lines
    assert sum(line.startswith("Manifest: ") for line in lines) == 3
    assert "  the deleted fact did not come back" in lines
    [after] = [line for line in lines if line.startswith("  recall 'Where do I work?' after:")]
    assert scenario.FORGET_CONTENT not in after
    assert lines[-1] == "demo complete"
    for path in files_under(data):
        assert API_KEY.encode() not in path.read_bytes(), path


def test_without_data_dir_the_demo_leaves_nothing_behind(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run_demo(capsys, "--offline-embedder", "hashing", "--json")

    assert code == 0
    document = json.loads(out)
    assert document["kept"] is False
    assert not Path(document["data_dir"]).exists()


def test_a_used_data_dir_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second run into the same directory would find the first run's memories."""
    (tmp_path / "old.txt").write_text("x", encoding="utf-8")

    code = main(["demo", "--offline-embedder", "hashing", "--data-dir", str(tmp_path)])

    assert code == 2
    assert "is not empty" in capsys.readouterr().err


def test_the_bundled_conversation_is_a_valid_tape_with_the_dated_sessions(tmp_path: Path) -> None:
    """docs/tape-format.md: the packaged file opens as a JSONL tape; every session has a
    date, and the key the demo checks for is really in it."""
    text = resources.files("memory_plugins.demo").joinpath("tape.jsonl").read_text("utf-8")
    copy = tmp_path / "tape.jsonl"
    copy.write_text(text, encoding="utf-8")

    conversation = scenario.load_conversation()
    with JsonlTape(copy) as tape:
        for session in scenario.SESSION_DATES:
            entries = asyncio.run(
                tape.get_by_session(
                    session,
                    deadline=Deadline.after(MonotonicClock(), 5),
                    cancel=CancellationToken(),
                )
            )
            assert [e.content for e in entries] == [
                m.content for m in conversation if m.session == session
            ]
    assert {m.session for m in conversation} == set(scenario.SESSION_DATES)
    assert API_KEY in text
