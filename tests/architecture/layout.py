"""Where the packages live, and helpers to copy them and plant violations for guard self-tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "ADAPTERS_DIR",
    "CLI_DIR",
    "CONTRACTS_DIR",
    "CORE_DIR",
    "PACKAGE_DIRS",
    "PLUGINS_DIR",
    "REPO_ROOT",
    "VECTORS_DIR",
    "copy_package",
    "describe",
    "plant",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
CORE_DIR = REPO_ROOT / "memory_core"
ADAPTERS_DIR = REPO_ROOT / "adapters" / "memory_adapters"
PLUGINS_DIR = REPO_ROOT / "plugins" / "memory_plugins"
CONTRACTS_DIR = REPO_ROOT / "contracts" / "memory_contracts"
CLI_DIR = PLUGINS_DIR / "cli"
VECTORS_DIR = ADAPTERS_DIR / "duckdb_vectors"
PACKAGE_DIRS = {
    "memory_core": CORE_DIR,
    "memory_adapters": ADAPTERS_DIR,
    "memory_plugins": PLUGINS_DIR,
    "memory_contracts": CONTRACTS_DIR,
}


def copy_package(source: Path, parent: Path) -> Path:
    """Copy the package at `source` into `parent` (no caches) and return the copy's directory."""
    destination = parent / source.name
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination


def plant(path: Path, source: str, *, package_root: Path | None = None) -> int:
    """Append `source` to `path` (creating it) and return the line offset it starts after.

    With `package_root`, every new directory between it and `path` gets an `__init__.py`, so
    the planted file is importable as a module of that package.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if package_root is not None:
        for directory in [path.parent, *path.parent.parents]:
            if directory == package_root or package_root not in directory.parents:
                break
            (directory / "__init__.py").touch()
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    if existing and not existing.endswith("\n"):
        existing += "\n"
    path.write_text(existing + source, encoding="utf-8")
    return existing.count("\n")


def describe(findings: Iterable[object]) -> str:
    """One finding per line, for assertion messages."""
    lines = [str(finding) for finding in findings]
    return "\n".join(lines) if lines else "(no findings)"
