"""The management routes reach memory through `MemoryService` and the tape through
`TapeInspectionReader` only (issue 12, R-ARCH-4, R-ARCH-5, R-PROV-5).

Read from each module's AST under `memory_plugins/routes`, and failing on:
- `route-imports-store`: an adapter, a builtin plugin factory, a store port module (claims,
  vectors, cursors) or the registry that builds stores — statically, under `TYPE_CHECKING`,
  as a literal dynamic import, or re-exported from the package `__init__`;
- `route-raw-tape`: the raw tape ports (`TapeRawEntryReader`, `TapeAnchorWriter`,
  `IngestionProjection`) or their methods (`get_by_session`, `read_current_range`);
- `route-store-attribute`: reaching through the facade to its parts (`.store`, `.index`,
  `.vectors`, `.gateway`, `._anchors`, `._ingestion`);
- `route-dynamic-import`: any dynamic import, whatever it names.
Each rule has a planted violation proving it can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .imports_ast import HOW_DYNAMIC, FileFacts, iter_python_modules, read_file_facts
from .layout import PLUGINS_DIR, copy_package, describe, plant

ROUTES_DIR = PLUGINS_DIR / "routes"
PACKAGE = "memory_plugins.routes"
FORBIDDEN_IMPORTS = (
    "memory_adapters",
    "memory_plugins.builtin",
    "memory_plugins.registry",
    "memory_plugins.bootstrap",
    "memory_core.ports.claims",
    "memory_core.ports.vectors",
    "memory_core.ports.cursor",
)
RAW_TAPE = (
    "memory_core.ports.tape.TapeRawEntryReader",
    "memory_core.ports.tape.TapeAnchorWriter",
    "memory_core.ports.tape.IngestionProjection",
)
RAW_TAPE_METHODS = ("get_by_session", "read_current_range")
FACADE_PARTS = ("store", "index", "vectors", "gateway", "_anchors", "_ingestion")


def _findings(facts: FileFacts) -> list[str]:
    found: list[str] = []

    def report(line: int, rule: str, detail: str) -> None:
        found.append(f"{facts.path}:{line}: [{rule}] {detail}")

    for ref in facts.imports:
        if ref.how == HOW_DYNAMIC:
            report(ref.line, "route-dynamic-import", ref.via)
        target = ref.first_match(FORBIDDEN_IMPORTS)
        if target is not None:
            report(ref.line, "route-imports-store", f"{ref.how} of {target}")
        for name in ref.targets:
            if name in RAW_TAPE:
                report(ref.line, "route-raw-tape", f"{ref.how} of {name}")
    for line, method in facts.method_calls:
        if method in RAW_TAPE_METHODS:
            report(line, "route-raw-tape", f".{method}(...)")
    for reference in facts.references:
        parts = reference.spelled.split(".")
        for part in parts[1:]:
            if part in FACADE_PARTS:
                report(reference.line, "route-store-attribute", reference.spelled)
                break
    return found


def scan(routes_dir: Path) -> list[str]:
    found: list[str] = []
    for path, module in iter_python_modules(routes_dir, PACKAGE):
        found += _findings(read_file_facts(path, module))
    return sorted(set(found))


def test_the_routes_have_one_door() -> None:
    findings = scan(ROUTES_DIR)
    assert not findings, describe(findings)


PLANTS = {
    "route-imports-store": ("leak.py", "from memory_adapters.sqlite_store import ApswClaimStore\n"),
    "type-only": (
        "leak.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from memory_core.ports.claims import ClaimStore\n",
    ),
    "re-export": ("__init__.py", "from memory_core.ports.claims import ClaimStore as Store\n"),
    "route-dynamic-import": (
        "leak.py",
        'import importlib\nstore = importlib.import_module("memory_adapters.sqlite_store")\n',
    ),
    "route-raw-tape": ("leak.py", "from memory_core.ports.tape import TapeRawEntryReader\n"),
    "raw-tape-call": ("leak.py", "async def f(tape):\n    return await tape.get_by_session('s')\n"),
    "route-store-attribute": (
        "leak.py",
        "def f(self):\n    return self._memory.store.get('a', 'b')\n",
    ),
}


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_the_guard_reports_a_planted_violation(tmp_path: Path, kind: str) -> None:
    copy = copy_package(ROUTES_DIR, tmp_path)
    name, source = PLANTS[kind]
    plant(copy / name, source)
    findings = scan(copy)
    assert findings and all(f"{copy / name}:" in f for f in findings), describe(findings)
