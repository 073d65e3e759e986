"""Plugins type-check against the `register` the loader really calls (R-ARCH-3).

mypy runs once, as a plugin author would run it over code that imports the installed
packages (they ship `py.typed`): over the example plugin, every builtin plugin module and a
planted plugin that misuses `register`. Only the planted calls may be reported, each with the
error that names its mistake.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WELL_TYPED = [
    REPO / "examples/plugin-hash-embedder/src/agent_memory_hash_embedder/plugin.py",
    *sorted((REPO / "plugins/memory_plugins/builtin").glob("*.py")),
]

MISUSE = """\
from memory_plugins import hookimpl
from memory_plugins.hookspecs import Register


def make() -> object:
    return object()


@hookimpl
def agent_memory_register_clocks(register: Register) -> None:
    register("no-context", make)
    register("typo", lambda context: context, descripton="misspelt")
    register("positional", lambda context: context, "a description")
    register(7, lambda context: context)
"""
# line of the planted call -> what mypy must say about it
EXPECTED = {
    11: 'Argument 2 to "__call__" of "Register" has incompatible type',
    12: 'Unexpected keyword argument "descripton"',
    13: 'Too many positional arguments for "__call__" of "Register"',
    14: 'Argument 1 to "__call__" of "Register" has incompatible type "int"; expected "str"',
}
ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+): error: (?P<message>.*)$")


PLANTED = "misusing_plugin.py"


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, int, str]]:
    """(file, line, message) of every error mypy reports."""
    workdir = tmp_path_factory.mktemp("typing")
    (workdir / PLANTED).write_text(MISUSE, encoding="utf-8")
    result = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent"),
            *("--cache-dir", str(workdir / "cache"), "--no-pretty"),
            *(str(path) for path in WELL_TYPED),
            PLANTED,
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    errors = [
        (Path(match["path"]).name, int(match["line"]), match["message"])
        for match in map(ERROR.match, result.stdout.splitlines())
        if match
    ]
    # A crash or a usage error reports no `file:line: error:` lines at all.
    assert errors or result.returncode == 0, result.stdout + result.stderr
    return errors


def test_the_example_and_builtin_plugins_type_check_against_register(
    mypy_errors: list[tuple[str, int, str]],
) -> None:
    """R-ARCH-3: the example plugin and every builtin module call `register` as typed."""
    elsewhere = [error for error in mypy_errors if error[0] != PLANTED]

    assert not elsewhere, "\n".join(f"{f}:{n}: {m}" for f, n, m in elsewhere)


def test_a_plugin_misusing_register_fails_type_checking_naming_each_mistake(
    mypy_errors: list[tuple[str, int, str]],
) -> None:
    """R-ARCH-3: a factory without the context, a misspelt keyword, an extra positional
    argument and a non-string name are each a type error at the call, before anything loads."""
    found = {line: message for name, line, message in mypy_errors if name == PLANTED}

    assert sorted(found) == sorted(EXPECTED), found
    for line, wanted in EXPECTED.items():
        assert wanted in found[line], (line, found[line])
