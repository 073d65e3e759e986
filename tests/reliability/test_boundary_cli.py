"""R-HOST-2 and R-DOM-4 at the command line: every failure the user can fix is a non-zero
exit with one line on stderr (one JSON object on stdout under --json), never a traceback;
text from conversations reaches the terminal with its control characters made visible."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memory_plugins.cli import ingest_cmd
from memory_plugins.cli.main import main
from memory_plugins.cli.output import Output

OSC_TITLE = "\x1b]0;PWNED\x07"
CLEAR_SCREEN = "\x1b[2J"
HOSTILE = f"The user likes {OSC_TITLE}green tea{CLEAR_SCREEN} and \x9b31m bidi \u202e."

COMMANDS = {
    "recall": ["recall", "--agent", "ana", "tea"],
    "doctor": ["doctor"],
    "reindex": ["reindex", "--agent", "ana"],
    "contribution": ["contribution", "--agent", "ana", "--session", "s1", "hello"],
    "list": ["list", "--agent", "ana"],
    "remember": ["remember", "--agent", "ana", "The user likes tea."],
}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line(err: str) -> str:
    assert "Traceback" not in err
    [line] = err.splitlines()
    return line


def _one_json_error(out: str) -> dict[str, str]:
    document = json.loads(out)  # exactly one document: json.loads refuses trailing data
    return document["error"]


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_data_dir_that_is_a_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """R-HOST-2: recall, doctor, reindex and contribution printed a traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")

    code, out, err = _run(capsys, "--data-dir", str(blocker), *command)
    assert code == 2
    assert out == ""
    assert "a-file" in _one_line(err)

    code, out, err = _run(capsys, "--json", "--data-dir", str(blocker), *command)
    assert code == 2
    assert "a-file" in _one_json_error(out)["message"]
    assert "Traceback" not in err


def test_ingest_into_a_data_dir_that_cannot_be_created_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-HOST-2: `ingest` printed a traceback when its data dir could not be created."""
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    tape = tmp_path / "chat.jsonl"
    tape.write_text(_message("s1", 1, "I live in Paris."), encoding="utf-8")

    code, _, err = _run(
        capsys, "--data-dir", str(blocker / "below"), "ingest", "--agent", "a", str(tape)
    )
    assert code == 2
    assert "below" in _one_line(err)


def test_a_config_file_that_is_not_utf8_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-HOST-2: a non-UTF-8 config file gave a UnicodeDecodeError traceback."""
    config = tmp_path / "config.toml"
    config.write_bytes(b"[settings]\n# caf\xe9\n")

    code, _, err = _run(
        capsys, "--config", str(config), "--data-dir", str(tmp_path / "d"), "doctor"
    )
    assert code == 2
    assert "config.toml" in _one_line(err)
    assert "UTF-8" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "recall"],  # required arguments missing
        ["--json", "no-such-command"],
        ["recall", "--json", "--agent", "ana", "tea", "--top-k", "many"],
    ],
    ids=["missing", "unknown-command", "bad-value"],
)
def test_argument_errors_under_json_are_one_json_document(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """R-HOST-2: with --json, argument errors printed nothing on stdout."""
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert _one_json_error(out)["type"] == "UsageError"
    assert err == ""


def test_an_argument_error_without_json_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "recall")
    assert code == 2
    assert out == ""
    assert "--agent" in _one_line(err)


def test_an_argument_that_is_not_utf8_is_a_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-DOM-4: `caf\\xe9` reaches Python as a lone surrogate; it was a UnicodeEncodeError
    traceback with exit 1."""
    argument = b"caf\xe9".decode("utf-8", "surrogateescape")

    code, _, err = _run(
        capsys, "--data-dir", str(tmp_path / "d"), "remember", "--agent", "ana", argument
    )
    assert code == 2
    assert "--text" in _one_line(err)

    code, out, _ = _run(
        capsys, "--json", "--data-dir", str(tmp_path / "d"), "recall", "--agent", "ana", argument
    )
    assert code == 2
    assert _one_json_error(out)["type"] == "ValidationError"


def test_a_failed_ingestion_pass_is_a_non_zero_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-HOST-2: `ingest` exited 0 when a session's pass failed with TapeFormatError."""
    from memory_adapters.tapes import TapeFormatError

    async def torn(*_: object, **__: object) -> object:
        raise TapeFormatError("chat.jsonl", 2, "torn while ingesting")

    monkeypatch.setattr(ingest_cmd.ExtractLog, "read_current_range", torn)
    monkeypatch.setattr(ingest_cmd.ExtractLog, "get_by_session", torn)  # the fallback read
    tape = tmp_path / "chat.jsonl"
    tape.write_text(_message("s1", 1, "I live in Paris."), encoding="utf-8")
    base = ["--data-dir", str(tmp_path / "d"), "ingest", "--agent", "ana", str(tape)]

    code, out, err = _run(capsys, *base)
    assert code == 2
    assert "TapeFormatError" in _one_line(err)

    code, out, _ = _run(capsys, "--json", *base)
    assert code == 2
    assert json.loads(out)["sessions"][0]["error"] == "TapeFormatError"


def test_list_and_ingest_render_escape_sequences_visibly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-HOST-2: a stored memory's ANSI/OSC sequences were printed raw, rewriting the
    operator's terminal."""
    data = ["--data-dir", str(tmp_path / "d")]
    code, _, _ = _run(capsys, *data, "remember", "--agent", "ana", HOSTILE)
    assert code == 0

    code, out, _ = _run(capsys, *data, "list", "--agent", "ana")
    assert code == 0
    _assert_inert(out)
    assert "\\x1b]0;PWNED\\x07" in out

    tape = tmp_path / "chat.jsonl"
    tape.write_text(_message("s1", 1, f"My name is Ana {OSC_TITLE}."), encoding="utf-8")
    code, out, _ = _run(
        capsys, *data, "ingest", "--agent", "ana", "--extractor", "verbatim", str(tape)
    )
    assert code == 0
    _assert_inert(out)


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
def test_every_human_readable_output_makes_control_characters_visible(rich: bool) -> None:
    """R-HOST-2: tables, lines, headings and errors, on a terminal (rich) and piped."""
    stream, errors = io.StringIO(), io.StringIO()
    out = Output(stdout=stream, stderr=errors, rich=rich)
    out.heading(HOSTILE)
    out.line(HOSTILE, style="green")
    out.table(("content",), [(HOSTILE,)], title=HOSTILE)
    out.error(ValueError(HOSTILE))
    _assert_inert(stream.getvalue())
    _assert_inert(errors.getvalue())
    assert "\\u202e" in stream.getvalue()


def test_the_json_document_carries_no_raw_c1_control_or_lone_surrogate() -> None:
    """R-HOST-2: JSON escapes C0 itself; C1 controls and lone surrogates are escaped too,
    and the document still reads back as the same text."""
    stream = io.StringIO()
    text = "a\x9b31m b\ud800 c\u202e"
    Output(json_mode=True, stdout=stream).document({"content": text})
    assert not any(
        0x80 <= ord(ch) <= 0x9F or 0xD800 <= ord(ch) <= 0xDFFF for ch in stream.getvalue()
    )
    assert json.loads(stream.getvalue())["content"] == text


def _assert_inert(text: str) -> None:
    unsafe = [ch for ch in text if (ord(ch) < 0x20 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F]
    assert unsafe == [], unsafe
    assert "\u202e" not in text


def _message(session: str, order_seq: int, content: str) -> str:
    record = {
        "id": f"{session}-{order_seq}",
        "session": session,
        "order_seq": order_seq,
        "role": "user",
        "content": content,
    }
    return json.dumps(record) + "\n"
