"""One door: the CLI, the evaluation and the MCP server are clients of `MemoryService`, never
of a store (R-ARCH-5, R-HOST-2).

Every command opens memory through `open_memory` and calls the service; the evaluation
opens it through the public API. This guard reads each module under `memory_plugins/cli`
and `memory_plugins/eval` from its AST and fails on what a second door looks like:

- `imports-store`: importing an adapter, a builtin plugin factory, or a store port module
  (the claim store's ports, the vector store's, the cursor store's) — anywhere in the file,
  under `TYPE_CHECKING` and as a literal dynamic import too;
- `creates-store`: calling (or naming in a string) a registry's `create_*_store`;
- `store-attribute`: reaching through `.store` or `.vectors` (`memory.store.get(...)`,
  `memory.index.vectors.drop_agent(...)`);
- `store-method`: calling a store port's method on anything but the service. The service
  is called `memory` in the CLI (`async with opened(ctx) as memory`,
  `call(ctx, lambda memory: ...)`) and `service` or `<evaluation memory>.service` in the
  evaluation; those are the receivers allowed to answer to a name the stores also use
  (`memory.delete`, `service.warm`).

The store method names are read from the port Protocols themselves, so a method added to a
port is guarded without editing this file. Names that builtin containers also have (`get`,
`insert`) are left out — `record.get(...)` on a dict is not a store call; a store can only be
had through the imports and factories the other rules forbid.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import pytest

import memory_core.ports

from .imports_ast import iter_python_modules, read_file_facts
from .layout import CLI_DIR, PLUGINS_DIR, copy_package, describe, plant

# The clients this guard holds to one door: (directory, package name).
CLIENTS = {
    "cli": (CLI_DIR, "memory_plugins.cli"),
    "eval": (PLUGINS_DIR / "eval", "memory_plugins.eval"),
    "mcp": (PLUGINS_DIR / "mcp", "memory_plugins.mcp"),
}
# Where the store ports live; a package here is walked, so role ports split into modules
# of it stay covered.
STORE_PORT_MODULES = ("memory_core.ports.claims", "memory_core.ports.vectors")
FORBIDDEN_IMPORTS = ("memory_adapters", "memory_plugins.builtin")
STORE_ATTRIBUTES = ("store", "vectors")
SERVICE_NAMES = ("memory", "service")
_CREATE_STORE = re.compile(r"create_\w*_store")
_BUILTIN_METHODS = frozenset().union(
    *(dir(kind) for kind in (dict, list, set, frozenset, tuple, str, bytes))
)


def _modules(name: str) -> Iterator[ModuleType]:
    module = importlib.import_module(name)
    yield module
    for info in pkgutil.walk_packages(getattr(module, "__path__", ()), prefix=f"{name}."):
        yield importlib.import_module(info.name)


def _store_port_modules() -> tuple[str, ...]:
    """The configured store port modules, and any other port module defining a `*Store`
    Protocol (the cursor store's, a future role port's)."""
    names = set(STORE_PORT_MODULES)
    for info in pkgutil.walk_packages(memory_core.ports.__path__, prefix="memory_core.ports."):
        module = importlib.import_module(info.name)
        if any(name.endswith("Store") for name, _ in _protocols(module)):
            names.add(info.name)
    return tuple(sorted(names))


def _protocols(module: ModuleType) -> list[tuple[str, type]]:
    return [
        (name, value)
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and getattr(value, "_is_protocol", False)
        and value.__module__ == module.__name__
    ]


def _store_methods(port_modules: tuple[str, ...]) -> frozenset[str]:
    methods: set[str] = set()
    for port in port_modules:
        for module in _modules(port):
            for _, protocol in _protocols(module):
                methods |= {
                    name
                    for name, value in vars(protocol).items()
                    if not name.startswith("_") and callable(value)
                }
    return frozenset(methods - _BUILTIN_METHODS)


STORE_PORTS = _store_port_modules()
STORE_METHODS = _store_methods(STORE_PORTS)


class Finding(NamedTuple):
    """One second door: file, line, rule and what was found (sorts by file and line)."""

    path: Path
    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.detail}"


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.findings: list[Finding] = []

    def _add(self, node: ast.AST, rule: str, detail: str) -> None:
        self.findings.append(Finding(self.path, getattr(node, "lineno", 0), rule, detail))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in STORE_ATTRIBUTES:
            self._add(node, "store-attribute", f".{node.attr}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if _CREATE_STORE.fullmatch(func.attr):
                self._add(node, "creates-store", f".{func.attr}(...)")
            elif func.attr in STORE_METHODS and not _is_service(func.value):
                self._add(node, "store-method", f"{ast.unparse(func)}(...)")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _CREATE_STORE.fullmatch(node.value):
            self._add(node, "creates-store", repr(node.value))


def _is_service(receiver: ast.expr) -> bool:
    """`memory`, `service`, or an attribute chain ending in `.service`."""
    if isinstance(receiver, ast.Name):
        return receiver.id in SERVICE_NAMES
    return isinstance(receiver, ast.Attribute) and receiver.attr == "service"


def scan_client(package_dir: Path, package_name: str) -> list[Finding]:
    """Every second door under `package_dir` (a client package or a copy of one)."""
    findings: list[Finding] = []
    forbidden = (*FORBIDDEN_IMPORTS, *STORE_PORTS)
    for path, module in iter_python_modules(package_dir, package_name):
        for ref in read_file_facts(path, module).imports:
            target = ref.first_match(forbidden)
            if target is not None:
                findings.append(Finding(path, ref.line, "imports-store", f"{ref.how} of {target}"))
        visitor = _Visitor(path)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        findings.extend(visitor.findings)
    return sorted(findings)


def test_the_guard_knows_the_store_ports() -> None:
    """The method list is read from the ports: an empty one would let everything through."""
    assert {"memory_core.ports.claims", "memory_core.ports.vectors"} <= set(STORE_PORTS)
    assert {"begin_clear", "search_fts", "drop_agent", "list_pending_embeddings"} <= STORE_METHODS


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_the_clients_reach_memory_only_through_the_service(client: str) -> None:
    """R-ARCH-5, R-HOST-2: no CLI or evaluation module builds a store, imports one, or
    calls one."""
    findings = scan_client(*CLIENTS[client])
    assert not findings, f"{client} has a second door to storage:\n" + describe(findings)


# (planted source appended to a CLI module, 1-based line of the violation in it, rule)
PLANTED = [
    pytest.param(
        "def f(ctx, context):\n"
        "    return ctx.plugins.registry.create_claim_store('sqlite', context)\n",
        2,
        "creates-store",
        id="create-claim-store",
    ),
    pytest.param(
        "def f(registry, context):\n    return registry.create_vector_store('duckdb', context)\n",
        2,
        "creates-store",
        id="create-vector-store",
    ),
    pytest.param(
        "def f(registry):\n    return getattr(registry, 'create_claim_store')\n",
        2,
        "creates-store",
        id="create-by-name",
    ),
    pytest.param(
        "from memory_adapters.sqlite_store import SqliteClaimStore\n",
        1,
        "imports-store",
        id="adapter-import",
    ),
    pytest.param(
        "from memory_plugins.builtin import claim_stores\n",
        1,
        "imports-store",
        id="builtin-factory-import",
    ),
    pytest.param(
        "from memory_core.ports.claims import ClaimStore\n",
        1,
        "imports-store",
        id="claim-port-import",
    ),
    pytest.param(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from memory_core.ports.vectors import VectorStore\n",
        4,
        "imports-store",
        id="type-checking-vector-port",
    ),
    pytest.param(
        "import importlib\n\nimportlib.import_module('memory_adapters.sqlite_store')\n",
        3,
        "imports-store",
        id="dynamic-adapter-import",
    ),
    pytest.param(
        "def f(memory):\n    return memory.store.list_claims('A')\n",
        2,
        "store-attribute",
        id="store-chain",
    ),
    pytest.param(
        "async def f(memory, d, c):\n"
        "    await memory.index.vectors.drop_agent('A', deadline=d, cancel=c)\n",
        2,
        "store-attribute",
        id="vectors-chain",
    ),
    pytest.param(
        "def f(store, now):\n    return store.begin_clear('A', now=now)\n",
        2,
        "store-method",
        id="claim-store-method",
    ),
    pytest.param(
        "async def f(vectors, d, c):\n    await vectors.list_ids('A', deadline=d, cancel=c)\n",
        2,
        "store-method",
        id="vector-store-method",
    ),
]


@pytest.mark.parametrize(("source", "line", "rule"), PLANTED)
def test_the_guard_reports_a_planted_second_door(
    tmp_path: Path, source: str, line: int, rule: str
) -> None:
    """R-ARCH-5: each kind of store access, planted in a copy of the CLI, is reported with
    its file, line and rule."""
    cli = copy_package(CLI_DIR, tmp_path)
    target = cli / "store_cmds.py"
    offset = plant(target, source)

    findings = scan_client(cli, "memory_plugins.cli")

    assert (target, offset + line, rule) in {(f.path, f.line, f.rule) for f in findings}, describe(
        findings
    )
    assert {f.path for f in findings} == {target}, describe(findings)


def test_the_service_may_answer_to_store_method_names(tmp_path: Path) -> None:
    """The service is the door: `memory.delete(...)`, `service.warm(...)` and
    `self.memory.service.list_claims(...)` pass; so does a dict's `.get`."""
    cli = copy_package(CLI_DIR, tmp_path)
    plant(
        cli / "store_cmds.py",
        "async def f(self, memory, service):\n"
        "    await memory.delete('A', 'mem-1')\n"
        "    await service.warm('A')\n"
        "    return self.memory.service.list_claims('A'), {'a': 1}.get('a')\n",
    )

    findings = scan_client(cli, "memory_plugins.cli")
    assert not findings, describe(findings)
