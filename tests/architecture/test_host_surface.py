"""Host surfaces (the CLI) reach storage and the raw tape only through the registry (R-ARCH-4).

`memory_plugins.cli` may use the composition root (`open_memory`) and the registry; importing
`memory_adapters.sqlite_store`, `.duckdb_vectors` or `.tapes` directly — statically, under
`TYPE_CHECKING` or by literal dynamic import — bypasses configuration and plugin choice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .guards import scan_host_surface
from .layout import CLI_DIR, describe, plant

COMMAND = "memory_plugins/cli/store.py"

PLANTED_HOST_VIOLATIONS = [
    pytest.param(
        "from memory_adapters.sqlite_store.claims import ApswClaimStore\n", 1, id="store-internals"
    ),
    pytest.param("from memory_adapters import tapes\n", 1, id="tapes-from-package"),
    pytest.param("import memory_adapters.duckdb_vectors\n", 1, id="vectors-module"),
    pytest.param(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from memory_adapters.tapes.jsonl import JsonlTape\n",
        4,
        id="type-checking",
    ),
    pytest.param(
        "import importlib\n\nimportlib.import_module('memory_adapters.sqlite_store')\n",
        3,
        id="dynamic",
    ),
]


def test_real_cli_reaches_storage_only_through_the_registry() -> None:
    """R-ARCH-4: no CLI module imports storage or tape adapters directly."""
    if not CLI_DIR.is_dir():
        pytest.skip("plugins/memory_plugins/cli does not exist yet")
    findings = scan_host_surface(CLI_DIR)
    assert not findings, "the CLI bypasses the registry:\n" + describe(findings)


@pytest.mark.parametrize(("source", "line"), PLANTED_HOST_VIOLATIONS)
def test_host_surface_scan_reports_a_planted_storage_import(
    tmp_path: Path, source: str, line: int
) -> None:
    """R-ARCH-4: the guard fails when a CLI module imports storage, naming file, line, rule."""
    cli = tmp_path / "memory_plugins" / "cli"
    plant(cli / "__init__.py", '"""The CLI."""\n')
    target = tmp_path / COMMAND
    offset = plant(target, source)

    findings = scan_host_surface(cli)

    assert [(f.path, f.line, f.rule) for f in findings] == [
        (target, offset + line, "host-reaches-storage")
    ], describe(findings)


def test_host_surface_scan_accepts_the_composition_root_and_ports(tmp_path: Path) -> None:
    """R-ARCH-4: the CLI may use open_memory, the registry, ports and the clocks adapter family."""
    cli = tmp_path / "memory_plugins" / "cli"
    plant(cli / "__init__.py", "from . import store\n")
    plant(
        tmp_path / COMMAND,
        "from memory_core.ports.tape import TapeRawEntryReader\n"
        "from memory_plugins.bootstrap import open_memory\n"
        "from memory_plugins.registry import PluginRegistry\n"
        "from ..registry import Registration\n",
    )

    findings = scan_host_surface(cli)

    assert not findings, describe(findings)
