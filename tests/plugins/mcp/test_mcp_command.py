"""`agent-memory mcp`'s refusals before it serves anything: one line, exit 2 (R-HOST-2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import memory_plugins.mcp
from memory_plugins.cli.main import EXIT_USER_ERROR, main


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["mcp", "--data-dir", str(tmp_path / "data"), *args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--transport", "http", "--host", "0.0.0.0"), "not a loopback address"),
        (("--transport", "http", "--host", "example.org"), "--allow-remote"),
        (("--agent", "not an id!"), "agent_id"),
        (("--agent", "A", "--session", " s1"), "session_id"),
        (("--transport", "sse"), "invalid choice"),
    ],
)
def test_a_bad_flag_is_refused_before_memory_opens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], fragment: str
) -> None:
    code, err = run(tmp_path, capsys, *args)

    assert code == EXIT_USER_ERROR
    assert fragment in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "data").exists()


def test_without_the_extra_the_command_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules makes an import raise ImportError naming it, as when absent.
    for name in ["mcp", *(n for n in sys.modules if n.startswith("mcp."))]:
        monkeypatch.setitem(sys.modules, name, None)
    for module in ("server", "transports"):  # forget them, had an earlier test loaded them
        monkeypatch.delitem(sys.modules, f"memory_plugins.mcp.{module}", raising=False)
        monkeypatch.delattr(memory_plugins.mcp, module, raising=False)

    code, err = run(tmp_path, capsys, "--agent", "A")

    assert code == EXIT_USER_ERROR, err
    assert "pip install 'agent-memory[mcp]'" in err
    assert not (tmp_path / "data").exists()
