"""`agent-memory ingest`: a JSONL tape in, what was stored, superseded and suppressed out.

R-HOST-2 (ingest a tape, progress, `--json`), R-WRITE-1/3/8 (settled-turn ingestion with a
cursor), R-FORGET-1 (a deleted fact stays suppressed on replay), R-PRIV-1 (secrets).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_memory_support import API_KEY, HASHING, REPLY, Cli, write_tape

PARIS = [("user", "Hi! My name is Ana and I live in Paris."), ("assistant", REPLY)]
BERLIN = [("user", "I moved to Berlin last month."), ("assistant", REPLY)]


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path, capsys, HASHING)


@pytest.fixture
def tape(tmp_path: Path) -> Path:
    return write_tape(tmp_path / "chat.jsonl", {"s1": PARIS, "s2": BERLIN})


def contents(views: list[dict]) -> set[str]:
    return {view["content"] for view in views}


def test_ingest_reports_each_session_and_what_it_stored_and_superseded(
    cli: Cli, tape: Path
) -> None:
    """R-HOST-2, R-WRITE-1: every session is ingested as a settled turn, in file order; the
    move supersedes the old home (R-LINEAGE-1)."""
    document = cli.json("ingest", "--agent", "ana", str(tape))

    assert [s["session"] for s in document["sessions"]] == ["s1", "s2"]
    assert [s["outcome"] for s in document["sessions"]] == ["completed", "completed"]
    assert {"The user's name is Ana.", "The user lives in Berlin."} <= contents(document["stored"])
    (paris,) = document["superseded"]
    assert paris["content"] == "The user lives in Paris."
    assert paris["status"] == "superseded"
    assert document["sessions"][1]["superseded"] == [[paris["id"], paris_successor(document)]]


def paris_successor(document: dict) -> str:
    (berlin,) = [v for v in document["stored"] if v["content"] == "The user lives in Berlin."]
    return berlin["id"]


def test_a_second_run_ingests_only_messages_added_since(cli: Cli, tape: Path) -> None:
    """R-WRITE-3, R-WRITE-8: the extraction cursor persists; re-running finds nothing new,
    and messages a host appended later are ingested once."""
    cli.json("ingest", "--agent", "ana", str(tape))

    again = cli.json("ingest", "--agent", "ana", str(tape))
    # Nothing after the cursor: not even enough to pass admission.
    assert {s["outcome"] for s in again["sessions"]} == {"below-threshold"}
    assert again["stored"] == []

    write_tape(
        tape, {"s2": [("user", "I love hiking in the Alps."), ("assistant", REPLY)]}, start=3
    )
    later = cli.json("ingest", "--agent", "ana", str(tape))
    assert contents(later["stored"]) == {"The user loves hiking in the Alps."}


def test_session_option_limits_ingestion_to_that_session(cli: Cli, tape: Path) -> None:
    """R-HOST-2: `--session` picks sessions of the tape."""
    document = cli.json("ingest", "--agent", "ana", "--session", "s2", str(tape))

    assert [s["session"] for s in document["sessions"]] == ["s2"]
    assert contents(document["stored"]) == {"The user lives in Berlin."}


def test_a_deleted_fact_is_suppressed_when_the_conversation_is_replayed(
    cli: Cli, tmp_path: Path
) -> None:
    """R-FORGET-1: after `delete`, the same words in another session are refused by the
    tombstone and reported as suppressed."""
    first = write_tape(tmp_path / "a.jsonl", {"s1": PARIS})
    stored = cli.json("ingest", "--agent", "ana", str(first))["stored"]
    (paris,) = [v for v in stored if v["content"] == "The user lives in Paris."]
    cli.json("delete", "--agent", "ana", paris["id"])

    replay = write_tape(tmp_path / "b.jsonl", {"s1-replay": PARIS})
    document = cli.json("ingest", "--agent", "ana", str(replay))

    (session,) = document["sessions"]
    assert session["suppressed"] == 1
    assert "The user lives in Paris." not in contents(document["stored"])
    listed = cli.json("list", "--agent", "ana", "--all")["claims"]
    assert "The user lives in Paris." not in {claim["content"] for claim in listed}


def test_a_pasted_api_key_is_refused_and_never_printed(cli: Cli, tmp_path: Path) -> None:
    """R-PRIV-1, R-PROV-5: the candidate carrying a key is rejected as secret-like; neither
    the store nor the command's output holds the key."""
    tape = write_tape(
        tmp_path / "key.jsonl",
        {"s1": [("user", f"Always use my API key {API_KEY} for staging."), ("assistant", REPLY)]},
    )
    code, out, err = cli.run("--json", "ingest", "--agent", "ana", str(tape))

    assert code == 0, err
    document = json.loads(out)
    (session,) = document["sessions"]
    assert sum(n for reason, n in session["rejected"].items() if "secret" in reason) == 1
    assert API_KEY not in out and API_KEY not in err
    for path in cli.data_dir.rglob("*"):
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes(), path


def test_the_tape_receives_only_content_free_extract_anchors(cli: Cli, tape: Path) -> None:
    """R-WRITE-8: ingestion appends one `memory/extract` anchor per chunk, ids and counts
    only; the host's messages are untouched."""
    before = tape.read_text("utf-8")
    cli.json("ingest", "--agent", "ana", str(tape))

    after = tape.read_text("utf-8")
    assert after.startswith(before)
    anchors = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert {a["kind"] for a in anchors} == {"anchor"}
    assert {a["anchor_kind"] for a in anchors} == {"memory/extract"}
    assert {a["session"] for a in anchors} == {"s1", "s2"}
    assert not any(word in json.dumps(anchors) for word in ("Paris", "Berlin", "Ana"))


def test_text_output_is_tables_without_colour_when_piped(cli: Cli, tape: Path) -> None:
    """R-HOST-2: plain aligned text for pipes."""
    code, out, _ = cli.run("ingest", "--agent", "ana", str(tape))

    assert code == 0
    assert "Ingested chat.jsonl for agent ana" in out
    assert "SESSION" in out and "SUPPRESSED" in out
    assert "The user lives in Berlin." in out
    assert "Superseded (1)" in out
    assert "\x1b[" not in out


def test_extractor_option_overrides_the_config(cli: Cli, tape: Path) -> None:
    """R-ARCH-5: `--extractor verbatim` stores each user turn as said (episodic)."""
    document = cli.json("ingest", "--agent", "ana", "--extractor", "verbatim", str(tape))

    assert {v["kind"] for v in document["stored"]} == {"episodic"}
    assert any("Paris" in v["content"] for v in document["stored"])


def test_llm_extractor_without_a_text_provider_is_a_readable_config_error(
    cli: Cli, tape: Path
) -> None:
    """R-ARCH-3: a plugin that cannot be built is a one-line error and exit code 2."""
    code, out, err = cli.run("ingest", "--agent", "ana", "--extractor", "llm", str(tape))

    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("agent-memory: error: extractor plugin 'llm'")
    assert "plugins.extractor.options.text_provider: required" in line


def test_a_missing_tape_file_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli.run("ingest", "--agent", "ana", str(tmp_path / "nope.jsonl"))

    assert code == 2
    assert "no such file" in err


def test_a_malformed_tape_names_its_line(cli: Cli, tmp_path: Path) -> None:
    """docs/tape-format.md: a malformed line is an error naming its line number."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "m1", "session": "s1"}\n{"id": 2}\n', encoding="utf-8")

    code, _, err = cli.run("ingest", "--agent", "ana", str(bad))

    assert code == 2
    assert "line 1" in err or "line 2" in err
