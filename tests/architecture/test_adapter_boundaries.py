"""The AST guard over memory_adapters: no host imports, no adapter-to-adapter imports (R-ARCH-4).

import-linter's `adapters-not-host` and `adapters-independent` contracts cover static imports;
this guard adds literal dynamic imports and refuses computed ones. `memory_adapters.clocks` is
an adapter like the others (see `guards.scan_adapters`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .guards import scan_adapters
from .layout import ADAPTERS_DIR, copy_package, describe, plant

STORE = "planted_store/store.py"

# (file inside memory_adapters, planted source, 1-based line of the violation in it, rule)
PLANTED_ADAPTER_VIOLATIONS = [
    pytest.param(STORE, "import pluggy\n", 1, "adapter-imports-host", id="pluggy"),
    pytest.param(
        STORE,
        "from memory_plugins.hookspecs import hookimpl\n",
        1,
        "adapter-imports-host",
        id="plugin-host",
    ),
    pytest.param(
        STORE,
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from memory_plugins.registry import PluginRegistry\n",
        4,
        "adapter-imports-host",
        id="type-checking-host",
    ),
    pytest.param(
        STORE,
        "import importlib\n\nimportlib.import_module('pluggy')\n",
        3,
        "adapter-imports-host",
        id="dynamic-pluggy",
    ),
    pytest.param(
        STORE,
        "from memory_adapters.clocks import SystemClock\n",
        1,
        "adapter-cross-import",
        id="absolute-sibling",
    ),
    pytest.param(
        STORE,
        "from ..clocks import SystemClock\n",
        1,
        "adapter-cross-import",
        id="relative-sibling",
    ),
    pytest.param(
        STORE, "from memory_adapters import clocks\n", 1, "adapter-cross-import", id="from-package"
    ),
    pytest.param(
        "clocks.py",
        "from memory_adapters.planted_store.store import X\n",
        1,
        "adapter-cross-import",
        id="module-adapter-into-package",
    ),
    pytest.param(
        STORE,
        "from memory_adapters.sql_claims import Session\n",
        1,
        "adapter-cross-import",
        id="shared-kit-outside-its-stores",
    ),
    pytest.param(
        "sql_claims/planted.py",
        "from memory_adapters.sqlite_store import ApswClaimStore\n",
        1,
        "adapter-cross-import",
        id="shared-kit-imports-a-store",
    ),
    pytest.param(
        STORE,
        "import importlib\n\nNAME = 'x'\nimportlib.import_module(NAME)\n",
        4,
        "adapter-unverifiable-dynamic-import",
        id="computed-dynamic",
    ),
    pytest.param(
        "__init__.py",
        "from memory_adapters.clocks import SystemClock\n",
        1,
        "adapter-package-reexport",
        id="package-reexport",
    ),
]


def test_real_adapters_import_neither_the_host_nor_each_other() -> None:
    """R-ARCH-4: no adapter imports pluggy, memory_plugins or another adapter."""
    findings = scan_adapters(ADAPTERS_DIR)
    assert not findings, "memory_adapters crosses a boundary:\n" + describe(findings)


@pytest.mark.parametrize(("relative", "source", "line", "rule"), PLANTED_ADAPTER_VIOLATIONS)
def test_adapter_scan_reports_a_planted_violation_with_file_line_and_rule(
    tmp_path: Path, relative: str, source: str, line: int, rule: str
) -> None:
    """R-ARCH-4: the guard fails on host and cross-adapter imports, naming file, line, rule."""
    adapters = copy_package(ADAPTERS_DIR, tmp_path)
    plant(adapters / "planted_store" / "__init__.py", '"""A planted adapter."""\n')
    target = adapters / relative
    offset = plant(target, source)

    findings = scan_adapters(adapters)

    assert (target, offset + line, rule) in {(f.path, f.line, f.rule) for f in findings}, describe(
        findings
    )
    assert {f.path for f in findings} == {target}, describe(findings)


def test_adapter_scan_accepts_imports_within_one_adapter_and_of_the_core(tmp_path: Path) -> None:
    """R-ARCH-4: an adapter may import its own modules, the core and literal libraries."""
    adapters = copy_package(ADAPTERS_DIR, tmp_path)
    plant(adapters / "planted_store" / "__init__.py", "from .store import X\n")
    plant(
        adapters / STORE,
        "import importlib\n\n"
        "from memory_adapters.planted_store import helpers\n"
        "from memory_core.ports.clock import DomainClock\n\n"
        "X = importlib.import_module('json')\n",
    )

    findings = scan_adapters(adapters)

    assert not findings, describe(findings)
