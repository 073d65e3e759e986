"""Importing any memory_core module loads no I/O, storage or plugin package at runtime (R-ARCH-1).

Static scans miss what only happens when code runs: a parent `__init__` with side effects, an
import-time `importlib.import_module(...)`, a library that drags in another. So each core module
is imported in a clean interpreter and `sys.modules` is checked afterwards.

Speed: first every core module is imported into one interpreter. What importing a module loads
does not depend on what was loaded before it, so what one module alone loads is a subset of
what all of them load together: when the union is clean, every module is. Only when it is not
is each module checked alone, to name the culprits: one driver interpreter, which has imported
only `os`, `sys` and the allowed attrs/cattrs (checked like everything else), forks a child per
module; each child starts from the same clean state, imports one module and reports what got
loaded. Where `os.fork` does not exist, one interpreter per module is used.

What is checked, and why `threading` is not in the list: the rule is that the core neither uses
nor drags in I/O, storage, network, process or plugin machinery. `threading` (and `weakref`,
`urllib.parse`) are loaded by the allowed `attrs`, `cattrs` and `logging` themselves, so their
presence says nothing about the core; a *direct* `import threading` in core code is caught by
the AST guard (`core-forbidden-library`) and by import-linter's `core-purity` contract.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .imports_ast import iter_python_modules
from .layout import CORE_DIR, REPO_ROOT, copy_package, plant

RUNTIME_FORBIDDEN = (
    "memory_adapters", "memory_plugins", "memory_contracts",
    "pluggy", "importlib_metadata", "importlib.metadata", "pkg_resources",
    "apsw", "sqlite3", "duckdb", "httpx", "numpy",
    "socket", "ssl", "http", "urllib.request",
    "subprocess", "asyncio", "multiprocessing", "concurrent",
    "shutil", "tempfile",
)  # fmt: skip

# The allowed libraries every core module needs, imported once before forking so each child
# skips them. Whatever they load is checked too: it shows up in the start-up line.
PRELOADED = ("attrs", "cattrs", "cattrs.preconf.json")

# Runs in the driver interpreter. It must import nothing beyond `os` and `sys` (both already
# loaded at start-up) before forking, or every child would inherit it.
_DRIVER = """
import os, sys

mode = sys.argv[1]
fork = mode == "fork"
forbidden = tuple(sys.argv[2].split(","))
preload = [name for name in sys.argv[3].split(",") if name]
modules = sys.argv[4:]

def loaded():
    return sorted(
        name for name in sys.modules
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )

def check(module):
    try:
        __import__(module)
    except BaseException as error:
        return ("error", f"{type(error).__name__}: {error}")
    return ("ok", loaded())

for name in preload:
    __import__(name)
# One line per module: its name and its (status, payload), tab-separated, both as repr().
print(repr("<interpreter start-up>"), repr(("ok", loaded())), sep="\t", flush=True)
if mode == "union":
    failed = [(module, check(module)) for module in modules]
    errors = [f"{module}: {payload}" for module, (status, payload) in failed if status != "ok"]
    print(repr("<all modules>"), repr(("error", errors) if errors else ("ok", loaded())),
          sep="\t", flush=True)
    sys.exit(0)
if not fork:
    for module in modules:
        print(repr(module), repr(check(module)), sep="\t", flush=True)
    sys.exit(0)
for module in modules:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.write(write_end, repr(check(module)).encode())
        os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    reply = b"".join(chunks).decode() or repr(("error", "the child died before replying"))
    print(repr(module), reply, sep="\t", flush=True)
"""


def _import_all_in_one_interpreter(modules: list[str], tree: Path) -> dict[str, tuple[str, object]]:
    """The start-up line and "<all modules>" -> ("ok", forbidden modules loaded by importing
    every module) or ("error", the failed imports)."""
    return _run_driver("union", [modules], tree)


def _import_each_in_a_clean_interpreter(
    modules: list[str], tree: Path, *, fork: bool = hasattr(os, "fork")
) -> dict[str, tuple[str, object]]:
    """module -> ("ok", forbidden modules loaded) or ("error", message); `tree` first on path."""
    # Without fork, a module imported inline would leak into the next: one interpreter each.
    batches = [modules] if fork else [[module] for module in modules]
    return _run_driver("fork" if fork else "inline", batches, tree)


def _run_driver(mode: str, batches: list[list[str]], tree: Path) -> dict[str, tuple[str, object]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    results: dict[str, tuple[str, object]] = {}
    for batch in batches:
        completed = subprocess.run(
            [
                sys.executable,
                "-c",
                _DRIVER,
                mode,
                ",".join(RUNTIME_FORBIDDEN),
                ",".join(PRELOADED),
                *batch,
            ],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        for line in completed.stdout.splitlines():
            name, reply = line.split("\t", 1)
            results[ast.literal_eval(name)] = ast.literal_eval(reply)
    return results


def _core_modules(core_dir: Path) -> list[str]:
    return [module for _, module in iter_python_modules(core_dir, "memory_core")]


def test_every_core_module_imports_without_io_storage_or_plugin_packages() -> None:
    """R-ARCH-1: each memory_core module, imported alone, loads no forbidden package."""
    modules = _core_modules(CORE_DIR)
    union = _import_all_in_one_interpreter(modules, REPO_ROOT)
    if union == {"<interpreter start-up>": ("ok", []), "<all modules>": ("ok", [])}:
        return  # every module alone loads a subset of this: all are clean

    results = _import_each_in_a_clean_interpreter(modules, REPO_ROOT)

    start_up = results.pop("<interpreter start-up>")
    assert start_up == ("ok", []), f"the interpreter plus attrs/cattrs is unclean: {start_up}"
    assert sorted(results) == sorted(modules)
    broken = {module: result for module, result in results.items() if result != ("ok", [])}
    assert not broken, "core modules that fail or load forbidden packages:\n" + "\n".join(
        f"  {module}: {status} {payload}" for module, (status, payload) in sorted(broken.items())
    )


@pytest.mark.parametrize(
    ("relative", "source", "victim", "leaked"),
    [
        pytest.param(
            "domain/__init__.py",
            "import importlib as _importlib\n\n_importlib.import_module('sqlite3')\n",
            "memory_core.domain.claims",
            "sqlite3",
            id="dynamic-import-in-parent-init",
        ),
        pytest.param(
            "services/planted.py",
            "from memory_adapters import clocks\n",
            "memory_core.services.planted",
            "memory_adapters",
            id="adapter-import",
        ),
    ],
)
def test_isolation_check_reports_a_planted_runtime_import_per_module(
    tmp_path: Path, relative: str, source: str, victim: str, leaked: str
) -> None:
    """R-ARCH-1: a module that loads a forbidden package is named; an unaffected one stays clean."""
    core = copy_package(CORE_DIR, tmp_path)
    plant(core / relative, source)

    results = _import_each_in_a_clean_interpreter(["memory_core", victim], tmp_path)

    status, payload = results[victim]
    assert status == "ok", payload
    assert isinstance(payload, list)
    assert leaked in payload, results
    # Each module is checked from a clean state: what the victim loaded does not leak over.
    assert results["memory_core"] == ("ok", []), results
    # The one-interpreter check that passes a clean tree sees the leak too.
    status, payload = _import_all_in_one_interpreter(["memory_core", victim], tmp_path)[
        "<all modules>"
    ]
    assert status == "ok" and isinstance(payload, list) and leaked in payload, payload


@pytest.mark.skipif(not hasattr(os, "fork"), reason="compares the forking driver with inline")
def test_isolation_check_gives_the_same_answer_with_and_without_fork(tmp_path: Path) -> None:
    """R-ARCH-1: the no-fork fallback (one interpreter per module) reports what fork reports."""
    core = copy_package(CORE_DIR, tmp_path)
    plant(core / "domain" / "planted.py", "import http.client\n")
    modules = ["memory_core", "memory_core.domain.planted"]

    forked = _import_each_in_a_clean_interpreter(modules, tmp_path, fork=True)
    inline = _import_each_in_a_clean_interpreter(modules, tmp_path, fork=False)

    assert forked == inline
    status, payload = forked["memory_core.domain.planted"]
    # http.client drags in socket: the check sees transitive loads, not only the direct one.
    assert status == "ok"
    assert isinstance(payload, list)
    assert {"http.client", "socket"} <= set(payload), forked
    assert forked["memory_core"] == ("ok", []), forked
