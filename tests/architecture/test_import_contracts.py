"""The import-linter contracts in pyproject.toml hold, and break on planted violations (R-ARCH-4).

`lint-imports` runs in a subprocess (its documented interface) with the venv's interpreter;
its report names each broken contract and the import chain with line numbers, and a failing
test shows that report. The planted cases copy all four packages into a temporary directory,
put it first on PYTHONPATH, copy pyproject.toml beside it and run one contract at a time.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from .guards import (
    CORE_ENTRY_POINT_MODULES,
    CORE_FORBIDDEN_LIBRARIES,
    CORE_RANDOM_MODULES,
    adapter_names,
)
from .layout import ADAPTERS_DIR, PACKAGE_DIRS, REPO_ROOT, copy_package, plant

PYPROJECT = REPO_ROOT / "pyproject.toml"


def _config() -> dict[str, Any]:
    with PYPROJECT.open("rb") as file:
        return tomllib.load(file)["tool"]["importlinter"]


def _contract(contract_id: str) -> dict[str, Any]:
    contracts = [c for c in _config()["contracts"] if c["id"] == contract_id]
    assert len(contracts) == 1, f"pyproject.toml must define exactly one contract {contract_id!r}"
    return contracts[0]


def _lint_imports_command() -> list[str]:
    script = Path(sys.executable).with_name("lint-imports")
    if script.exists():
        return [str(script)]
    found = shutil.which("lint-imports")
    if found:
        return [found]
    # The console script's own body, for installs without the script on disk.
    return [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()"]


def _run_lint_imports(cwd: Path, path_entries: list[Path], *args: str) -> tuple[int, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in path_entries)
    env["NO_COLOR"] = "1"
    result = subprocess.run(
        [*_lint_imports_command(), "--no-cache", "--no-logo", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


def test_import_linter_contracts_are_kept() -> None:
    """R-ARCH-4, R-ARCH-1: every import-linter contract in pyproject.toml is kept."""
    source_roots = [directory.parent for directory in PACKAGE_DIRS.values()]

    status, report = _run_lint_imports(REPO_ROOT, source_roots)

    assert status == 0, f"lint-imports found broken contracts:\n{report}"
    assert f"{len(_config()['contracts'])} kept, 0 broken" in report, report


# (contract id, file to plant relative to the temp root, source, what import-linter must report:
# the violating import, the undeclared module, or the package with the cycle)
PLANTED_CONTRACT_VIOLATIONS = [
    pytest.param(
        "core-purity",
        "memory_core/domain/planted.py",
        "import duckdb\n",
        "memory_core.domain.planted -> duckdb",
        id="core-imports-duckdb",
    ),
    pytest.param(
        "core-purity",
        "memory_core/services/planted.py",
        "def connect():\n    import sqlite3\n    return sqlite3\n",
        "memory_core.services.planted -> sqlite3",
        id="core-imports-sqlite3-in-function",
    ),
    pytest.param(
        "layers",
        "memory_core/ports/planted.py",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from memory_adapters import x\n",
        "memory_core.ports.planted -> memory_adapters",
        id="core-type-checks-against-an-adapter",
    ),
    pytest.param(
        "adapters-not-host",
        "memory_adapters/clocks.py",
        "import pluggy\n",
        "memory_adapters.clocks -> pluggy",
        id="adapter-imports-pluggy",
    ),
    pytest.param(
        "adapters-independent",
        "memory_adapters/planted_store/store.py",
        "from memory_adapters.clocks import SystemClock\n",
        "memory_adapters.planted_store.store -> memory_adapters.clocks",
        id="adapter-imports-adapter",
    ),
    pytest.param(
        "contracts-no-adapter",
        "memory_contracts/planted.py",
        "from memory_adapters.clocks import SystemClock\n",
        "memory_contracts.planted -> memory_adapters.clocks",
        id="contracts-import-adapter",
    ),
    pytest.param(
        "core-layers",
        "memory_core/domain/planted.py",
        "from memory_core.ports.clock import InfraClock\n",
        "memory_core.domain.planted -> memory_core.ports.clock",
        id="domain-imports-a-port",
    ),
    pytest.param(
        "core-layers",
        "memory_core/domain/planted.py",
        "from memory_core.settings import MemorySettings\n",
        "memory_core.domain.planted -> memory_core.settings",
        id="domain-reads-settings",
    ),
    pytest.param(
        "core-layers",
        "memory_core/ports/planted.py",
        "from memory_core.settings import MemorySettings\n",
        "memory_core.ports.planted -> memory_core.settings",
        id="port-reads-settings",
    ),
    pytest.param(
        "core-layers",
        "memory_core/storage/planted.py",
        "from memory_core.services.read.keywords import search_terms\n",
        "memory_core.storage.planted -> memory_core.services.read.keywords",
        id="storage-rule-imports-a-service",
    ),
    pytest.param(
        "core-layers",
        "memory_core/planted.py",
        "PLANTED = 1\n",
        "memory_core.planted",
        id="core-child-without-a-layer",
    ),
    pytest.param(
        "services-layers",
        "memory_core/services/write/planted.py",
        "from memory_core.services.read.keywords import search_terms\n",
        "memory_core.services.write.planted -> memory_core.services.read.keywords",
        id="write-imports-read",
    ),
    pytest.param(
        "services-layers",
        "memory_core/services/providers/planted.py",
        "from memory_core.services.vectors.index import VectorIndex\n",
        "memory_core.services.providers.planted -> memory_core.services.vectors.index",
        id="providers-import-vectors",
    ),
    pytest.param(
        "core-acyclic",
        "memory_core/domain/errors.py",
        "from memory_core.domain.claims import Claim\n",
        "No cycles are allowed in memory_core.domain.",
        id="domain-modules-import-each-other",
    ),
]


@pytest.mark.parametrize(
    ("contract_id", "relative", "source", "chain"), PLANTED_CONTRACT_VIOLATIONS
)
def test_import_linter_breaks_on_a_planted_violation_and_names_it(
    tmp_path: Path, contract_id: str, relative: str, source: str, chain: str
) -> None:
    """R-ARCH-4, R-ARCH-1: lint-imports exits non-zero naming the contract and violating import."""
    for directory in PACKAGE_DIRS.values():
        copy_package(directory, tmp_path)
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    target = tmp_path / relative
    package = relative.split("/", maxsplit=1)[0]
    plant(target, source, package_root=tmp_path / package)

    status, report = _run_lint_imports(tmp_path, [tmp_path], "--contract", contract_id)

    # import-linter wraps long lines at the terminal width; compare with the breaks undone.
    flat = " ".join(report.split())
    assert status != 0, report
    assert f"{_contract(contract_id)['name']} BROKEN" in flat, report
    assert chain in flat, report


def test_every_contract_has_a_planted_violation_case() -> None:
    """R-ARCH-4: no contract in pyproject.toml goes unproven that it can break."""
    planted = {case.values[0] for case in PLANTED_CONTRACT_VIOLATIONS}
    configured = {contract["id"] for contract in _config()["contracts"]}

    assert configured <= planted, f"add a planted case for: {sorted(configured - planted)}"


def test_every_adapter_is_under_the_independence_contract() -> None:
    """R-ARCH-4: each existing memory_adapters child matches the independence contract."""
    expressions = _contract("adapters-independent")["modules"]
    # import-linter's `*` stands for exactly one module-name segment.
    patterns = [expression.replace("*", "[!.]*") for expression in expressions]
    adapters = [f"memory_adapters.{name}" for name in adapter_names(ADAPTERS_DIR)]

    uncovered = [a for a in adapters if not any(fnmatch.fnmatchcase(a, p) for p in patterns)]

    assert adapters, "memory_adapters has no adapter; the adapter layout changed"
    assert not uncovered, f"adapters outside the independence contract: {uncovered}"


def test_core_contract_forbids_every_top_level_module_the_ast_guard_forbids() -> None:
    """R-ARCH-1: import-linter's core-purity list and the AST guard's lists do not drift apart."""
    forbidden = set(_contract("core-purity")["forbidden_modules"])
    guarded = (*CORE_FORBIDDEN_LIBRARIES, *CORE_ENTRY_POINT_MODULES, *CORE_RANDOM_MODULES)
    # import-linter forbids only top-level external packages; the AST guard covers dotted ones.
    expressible = {name for name in guarded if "." not in name}

    missing = sorted(expressible - forbidden)

    assert not missing, f"add to the core-purity contract in pyproject.toml: {missing}"
