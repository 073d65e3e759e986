"""The AST guard over memory_core: what import-linter cannot see (R-ARCH-1, R-ARCH-4).

Each planted case copies the real core into a temporary directory, adds one violation and runs
the same `scan_core` the real-tree test runs; the guard must name that file, line and rule, and
nothing else in the copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .guards import scan_core
from .layout import CORE_DIR, copy_package, describe, plant

TC = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"

# (file inside memory_core, planted source, 1-based line of the violation in it, rule)
PLANTED_CORE_VIOLATIONS = [
    pytest.param("domain/planted.py", "import duckdb\n", 1, "core-forbidden-library", id="static"),
    pytest.param(
        "services/planted.py",
        "def load():\n    import sqlite3\n    return sqlite3\n",
        2,
        "core-forbidden-library",
        id="import-inside-function",
    ),
    pytest.param("domain/planted.py", "import os\n", 1, "core-forbidden-library", id="os"),
    pytest.param(
        "domain/planted.py", "import urllib.request\n", 1, "core-forbidden-library", id="urllib"
    ),
    pytest.param(
        "domain/planted.py",
        "import importlib\n\nimportlib.import_module('httpx')\n",
        3,
        "core-dynamic-import",
        id="import_module",
    ),
    pytest.param(
        "domain/planted.py",
        "from importlib import import_module as load\n\nload('duckdb')\n",
        3,
        "core-dynamic-import",
        id="aliased-import_module",
    ),
    pytest.param(
        "domain/planted.py", "np = __import__('numpy')\n", 1, "core-dynamic-import", id="dunder"
    ),
    pytest.param(
        "domain/planted.py", "exec('import duckdb')\n", 1, "core-dynamic-import", id="exec"
    ),
    pytest.param(
        "ports/planted.py",
        TC + "    from memory_adapters import x\n",
        4,
        "core-imports-outer-layer",
        id="type-checking-adapter",
    ),
    pytest.param(
        "ports/planted.py",
        "import typing\n\nif typing.TYPE_CHECKING:\n    import memory_plugins.registry\n",
        4,
        "core-imports-outer-layer",
        id="typing.TYPE_CHECKING-host",
    ),
    pytest.param(
        "ports/planted.py",
        TC + "    import httpx\n",
        4,
        "core-forbidden-library",
        id="type-checking-io-library",
    ),
    pytest.param(
        "ports/planted.py",
        TC + "    pass\nelse:\n    import apsw\n",
        6,
        "core-forbidden-library",
        id="type-checking-else-branch",
    ),
    pytest.param(
        "domain/__init__.py",
        "from memory_adapters.clocks import SystemClock\n",
        1,
        "core-reexport",
        id="init-reexport",
    ),
    pytest.param(
        "domain/planted.py",
        "from datetime import UTC, datetime\n\nSTAMP = datetime.now(UTC)\n",
        3,
        "core-wall-clock",
        id="datetime.now",
    ),
    pytest.param(
        "domain/planted.py",
        "import datetime as dt\n\nFACTORY = dt.datetime.utcnow\n",
        3,
        "core-wall-clock",
        id="utcnow-as-factory",
    ),
    pytest.param(
        "domain/planted.py",
        "from datetime import date\n\n\ndef today():\n    return date.today()\n",
        5,
        "core-wall-clock",
        id="date.today",
    ),
    pytest.param(
        "services/planted.py",
        "import time\n\n\ndef elapsed():\n    return time.monotonic()\n",
        5,
        "core-wall-clock",
        id="time.monotonic",
    ),
    pytest.param(
        "services/planted.py",
        "from time import perf_counter\n\nSTART = perf_counter()\n",
        3,
        "core-wall-clock",
        id="perf_counter",
    ),
    pytest.param(
        "services/planted.py", "import time\n\nNOW = time.time()\n", 3, "core-wall-clock", id="time"
    ),
    pytest.param("domain/planted.py", "import random\n", 1, "core-randomness", id="random"),
    pytest.param(
        "domain/planted.py", "from random import choice\n", 1, "core-randomness", id="from-random"
    ),
    pytest.param(
        "domain/planted.py",
        "def read(path):\n    with open(path) as f:\n        return f.read()\n",
        2,
        "core-io",
        id="open",
    ),
    pytest.param(
        "domain/planted.py",
        "from pathlib import Path\n\nTEXT = Path('x').read_text()\n",
        3,
        "core-io",
        id="path-read_text",
    ),
    pytest.param("domain/planted.py", "print('hello')\n", 1, "core-io", id="print"),
    pytest.param(
        "domain/planted.py",
        "from importlib.metadata import entry_points\n",
        1,
        "core-entry-point-discovery",
        id="importlib.metadata",
    ),
    pytest.param(
        "domain/planted.py",
        "import importlib_metadata\n",
        1,
        "core-entry-point-discovery",
        id="importlib_metadata",
    ),
    pytest.param(
        "domain/planted.py", "import pydantic\n", 1, "core-third-party-import", id="third-party"
    ),
    pytest.param(
        "domain/planted.py",
        'TARGET = "memory_adapters.sqlite_store:ApswClaimStore"\n',
        1,
        "core-module-path-string",
        id="module-path-string",
    ),
]

# Code the core legitimately writes; the guard must stay quiet about all of it.
ALLOWED_CORE_SOURCE = '''\
"""Mentions datetime.now() and memory_adapters.clocks in prose only."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import attrs

from memory_core.domain.errors import ValidationError

if TYPE_CHECKING:
    from memory_core.ports.clock import DomainClock

logger = logging.getLogger(__name__)


def later(clock: DomainClock) -> datetime:
    return clock.now() + timedelta(seconds=1)


def parse(text: str) -> datetime:
    if not text:
        raise ValidationError("empty")
    return datetime.fromisoformat(text).astimezone(UTC)


@attrs.frozen
class Breaker:
    state: str = "closed"

    def open(self) -> Breaker:
        return attrs.evolve(self, state="open")

    def trip(self) -> Breaker:
        return self.open()
'''


def test_real_core_has_no_purity_violations() -> None:
    """R-ARCH-1, R-ARCH-4: memory_core has no dynamic import, clock read, I/O or banned import."""
    findings = scan_core(CORE_DIR)
    assert not findings, "memory_core breaks the purity rules:\n" + describe(findings)


@pytest.mark.parametrize(("relative", "source", "line", "rule"), PLANTED_CORE_VIOLATIONS)
def test_core_scan_reports_a_planted_violation_with_file_line_and_rule(
    tmp_path: Path, relative: str, source: str, line: int, rule: str
) -> None:
    """R-ARCH-1, R-ARCH-4: the guard fails on each kind of violation, naming file, line, rule."""
    core = copy_package(CORE_DIR, tmp_path)
    target = core / relative
    offset = plant(target, source)

    findings = scan_core(core)

    reported = {(f.path, f.line, f.rule) for f in findings}
    assert (target, offset + line, rule) in reported, describe(findings)
    assert {f.path for f in findings} == {target}, describe(findings)
    assert f"{target}:{offset + line}: [{rule}]" in describe(findings)


def test_core_scan_accepts_clock_ports_logging_and_type_checking_self_imports(
    tmp_path: Path,
) -> None:
    """R-ARCH-1: ports, stdlib values, logging and core-internal TYPE_CHECKING imports pass."""
    core = copy_package(CORE_DIR, tmp_path)
    plant(core / "services" / "planted.py", ALLOWED_CORE_SOURCE)

    findings = scan_core(core)

    assert not findings, describe(findings)


def test_core_scan_reports_a_file_it_cannot_parse_instead_of_skipping_it(tmp_path: Path) -> None:
    """R-ARCH-4: an unparseable file is a finding, so a violation cannot hide behind it."""
    core = copy_package(CORE_DIR, tmp_path)
    target = core / "domain" / "planted.py"
    plant(target, "def broken(:\n    import duckdb\n")

    findings = scan_core(core)

    assert [(f.path, f.rule) for f in findings] == [(target, "guard-unparseable")], describe(
        findings
    )
