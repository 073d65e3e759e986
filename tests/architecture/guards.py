"""Architecture guard rules for what import-linter cannot see (R-ARCH-1, R-ARCH-4, R-ARCH-6).

import-linter (configured in pyproject.toml) carries the static import graph. These scanners add,
per file and line:

- `scan_core`: the pure core's bans — outer layers and I/O / concurrency / plugin libraries
  imported anywhere (inside functions and under `if TYPE_CHECKING:` too), re-exports from an
  `__init__`, any dynamic import, entry-point discovery, wall-clock reads, randomness, file and
  console I/O, module-path strings, and any third-party import besides attrs and cattrs.
- `scan_adapters`: an adapter importing pluggy or the plugin host, or another adapter.
- `scan_host_surface`: the CLI reaching storage or tape adapters instead of the registry.
- `scan_vector_path`: DuckDB extension SQL (`INSTALL`/`LOAD`) or an approximate index
  (`hnsw`, `vss`) in the DuckDB vector adapter's string literals.

Every scanner takes a directory, so the tests run the same function on the real tree and on a
temporary copy with a planted violation. Extend a guard by adding a name to one of the tuples
below, or a new rule to `RULES` plus a check in the matching scanner, and a planted case to its
test.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .imports_ast import (
    HOW_DYNAMIC,
    HOW_TYPE_CHECKING,
    FileFacts,
    Reference,
    iter_python_modules,
    read_file_facts,
)

__all__ = [
    "ADAPTER_PACKAGE",
    "CORE_ENTRY_POINT_MODULES",
    "CORE_FORBIDDEN_LIBRARIES",
    "CORE_PACKAGE",
    "CORE_RANDOM_MODULES",
    "HOST_SURFACE_FORBIDDEN",
    "RULES",
    "Finding",
    "adapter_names",
    "scan_adapters",
    "scan_core",
    "scan_host_surface",
    "scan_vector_path",
]

CORE_PACKAGE = "memory_core"
ADAPTER_PACKAGE = "memory_adapters"
OUTER_LAYERS = ("memory_adapters", "memory_plugins", "memory_contracts")
# I/O, storage, network, concurrency and plugin machinery. `threading` is banned as a direct
# import even though attrs and logging load it: the rule is about what core code uses.
CORE_FORBIDDEN_LIBRARIES = (
    "pluggy", "apsw", "sqlite3", "duckdb", "httpx", "numpy",
    "socket", "ssl", "selectors", "http", "urllib.request",
    "subprocess", "threading", "_thread", "asyncio", "multiprocessing", "concurrent",
    "os", "shutil", "tempfile", "glob", "fileinput", "mmap",
)  # fmt: skip
CORE_ENTRY_POINT_MODULES = ("importlib.metadata", "importlib_metadata", "pkg_resources")
CORE_RANDOM_MODULES = ("random", "secrets")
CORE_ALLOWED_THIRD_PARTY = ("attrs", "cattrs", CORE_PACKAGE)
# Business time comes from DomainClock, durations from InfraClock; sleeping blocks the pure core.
WALL_CLOCK = (
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
    "datetime.date.today", "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns",
    "time.perf_counter", "time.perf_counter_ns", "time.process_time", "time.sleep",
)  # fmt: skip
# When `datetime`/`date` was not imported under a name we can resolve, match the spelling.
WALL_CLOCK_SPELLINGS = ("datetime.now", "datetime.utcnow", "datetime.today", "date.today")
CORE_IO_CALLS = ("open", "print", "input", "io.open")
CORE_IO_METHODS = (
    "read_text", "read_bytes", "write_text", "write_bytes",
    "mkdir", "touch", "unlink", "rmdir", "iterdir", "rglob",
)  # fmt: skip
CORE_ENTRY_POINT_CALLS = ("entry_points", "load_setuptools_entrypoints")
_MODULE_PATH_STRING = re.compile(
    r"(?:memory_adapters|memory_plugins|memory_contracts)(?:\.\w+)*(?::\w+(?:\.\w+)*)?"
)

HOST_MODULES = ("pluggy", "memory_plugins")
# The shared kits and the adapters that build on them: pyproject.toml's adapters-independent
# contract ignores exactly these imports.
SHARED_ADAPTER_KITS = {
    "sql_claims": ("sqlite_store", "postgres_store"),
    "gil": ("extractors", "local_embedder"),
}
# Host surfaces reach storage and the raw tape through the registry / composition root only.
HOST_SURFACE_FORBIDDEN = (
    "memory_adapters.sqlite_store",
    "memory_adapters.duckdb_vectors",
    "memory_adapters.tapes",
)

# Uppercase SQL keywords anywhere, and a lowercase statement that is only `install x` / `load x`.
_EXTENSION_KEYWORD = re.compile(r"\b(?:INSTALL|LOAD)\b")
_EXTENSION_STATEMENT = re.compile(
    r"(?im)(?:^|;)\s*(?:force\s+)?(?:install|load)\s+['\"]?\w+['\"]?\s*(?:;|$|from\b)"
)
_APPROXIMATE_INDEX = re.compile(r"(?i)hnsw|(?<![a-z])vss(?![a-z])")
_EXTENSION_METHODS = ("install_extension", "load_extension")

RULES: dict[str, str] = {
    "core-imports-outer-layer": "memory_core must not import an adapter, the host or contracts",
    "core-forbidden-library": "memory_core must not import an I/O, concurrency or plugin library",
    "core-reexport": "a memory_core __init__ must not re-export from an outer layer or library",
    "core-dynamic-import": "memory_core must not import or run code by name at runtime",
    "core-entry-point-discovery": "plugin discovery belongs to memory_plugins.loader",
    "core-randomness": "memory_core must be deterministic: no random/secrets",
    "core-third-party-import": "memory_core imports only the stdlib, attrs and cattrs",
    "core-wall-clock": "time comes from the DomainClock / InfraClock ports",
    "core-io": "memory_core performs no file or console I/O",
    "core-module-path-string": "memory_core must not name outer-layer modules in strings",
    "adapter-imports-host": "adapters never import pluggy or memory_plugins",
    "adapter-cross-import": "an adapter must not import another adapter",
    "adapter-package-reexport": "memory_adapters/__init__ must not import an adapter",
    "adapter-unverifiable-dynamic-import": "a dynamic import in an adapter must name a literal",
    "host-reaches-storage": "the CLI reaches storage and tapes through the registry only",
    "vector-path-extension-sql": "the vector path must not INSTALL or LOAD DuckDB extensions",
    "vector-path-approximate-index": "the vector path is an exact scan: no hnsw / vss",
    "guard-unparseable": "the guard could not parse this file",
}


@dataclass(frozen=True, order=True)
class Finding:
    """One violation: the file, the line and the rule it breaks."""

    path: Path
    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.detail} — {RULES[self.rule]}"


def _scan(
    package_dir: Path, package_name: str, check: Callable[[FileFacts], list[Finding]]
) -> list[Finding]:
    """Run `check` over every module under `package_dir`; a missing directory has no findings."""
    findings: list[Finding] = []
    if not package_dir.is_dir():
        return findings
    for path, module in iter_python_modules(package_dir, package_name):
        try:
            facts = read_file_facts(path, module)
        except SyntaxError as error:
            findings.append(Finding(path, error.lineno or 0, "guard-unparseable", str(error)))
            continue
        findings.extend(check(facts))
    return sorted(findings)


# --- the pure core ---------------------------------------------------------------------------


def scan_core(core_dir: Path) -> list[Finding]:
    """R-ARCH-1 / R-ARCH-4 findings for the `memory_core` package at `core_dir`."""
    return _scan(core_dir, CORE_PACKAGE, _check_core_file)


def _check_core_file(facts: FileFacts) -> list[Finding]:
    findings = _core_import_findings(facts)
    for ref in facts.references:
        violation = _core_reference_violation(ref)
        if violation is not None:
            findings.append(_finding(facts, ref.line, *violation))
    for line, method in facts.method_calls:
        if method in CORE_IO_METHODS:
            findings.append(_finding(facts, line, "core-io", f".{method}(...)"))
    for line, text in facts.strings:
        if _MODULE_PATH_STRING.fullmatch(text):
            findings.append(_finding(facts, line, "core-module-path-string", repr(text)))
    return findings


def _core_reference_violation(ref: Reference) -> tuple[str, str] | None:
    """(rule, detail) if this dotted name reads a clock, does I/O or discovers plugins."""
    parts = ref.qualified.split(".")
    prefixes = {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
    spelled_clock = any(
        ref.spelled == tail or ref.spelled.endswith("." + tail) for tail in WALL_CLOCK_SPELLINGS
    )
    if prefixes & set(WALL_CLOCK) or spelled_clock:
        # A reference, not only a call: `attrs.field(factory=datetime.now)` reads the clock too.
        return "core-wall-clock", ref.spelled
    if not ref.is_call:
        return None
    if ref.qualified in CORE_IO_CALLS:
        return "core-io", f"{ref.spelled}(...)"
    if parts[-1] in CORE_ENTRY_POINT_CALLS:
        return "core-entry-point-discovery", f"{ref.spelled}(...)"
    return None


def _core_import_findings(facts: FileFacts) -> list[Finding]:
    findings: list[Finding] = []
    for ref in facts.imports:
        if ref.how == HOW_DYNAMIC:
            target = ref.targets[0] if ref.targets else "<computed name>"
            detail = f"{ref.via}({target!r})"
            findings.append(_finding(facts, ref.line, "core-dynamic-import", detail))
            continue
        for prefixes, rule in (
            (OUTER_LAYERS, "core-imports-outer-layer"),
            (CORE_FORBIDDEN_LIBRARIES, "core-forbidden-library"),
            (CORE_ENTRY_POINT_MODULES, "core-entry-point-discovery"),
            (CORE_RANDOM_MODULES, "core-randomness"),
        ):
            target = ref.first_match(prefixes)
            if target is None:
                continue
            # `from x import y` in a package `__init__` hands y to everyone importing the package.
            reexport = facts.is_package_init and ref.is_from and ref.how != HOW_TYPE_CHECKING
            reported = "core-reexport" if reexport else rule
            findings.append(_finding(facts, ref.line, reported, f"{ref.how} of {target}"))
            break
        else:
            root = ref.targets[0].partition(".")[0]
            if root not in sys.stdlib_module_names and root not in CORE_ALLOWED_THIRD_PARTY:
                detail = f"{ref.how} of {ref.targets[0]}"
                findings.append(_finding(facts, ref.line, "core-third-party-import", detail))
    return findings


def _finding(facts: FileFacts, line: int, rule: str, detail: str) -> Finding:
    return Finding(facts.path, line, rule, detail)


# --- adapters --------------------------------------------------------------------------------


def adapter_names(adapters_dir: Path) -> list[str]:
    """The adapters in `memory_adapters`: its subpackages and its top-level modules."""
    if not adapters_dir.is_dir():
        return []
    names = {
        child.name for child in adapters_dir.iterdir() if child.is_dir() and any(child.glob("*.py"))
    }
    names |= {child.stem for child in adapters_dir.glob("*.py") if child.name != "__init__.py"}
    return sorted(names)


def scan_adapters(adapters_dir: Path) -> list[Finding]:
    """R-ARCH-4 findings for the `memory_adapters` package at `adapters_dir`.

    `memory_adapters.clocks` counts as an adapter like any other: it implements the clock
    ports, and other adapters receive clocks through those ports from the composition root.
    Only the package's own `__init__` is shared, and it may import no adapter — apart from
    `SHARED_ADAPTER_KITS`, which only the adapters named there may import.
    """
    adapters = adapter_names(adapters_dir)

    def check(facts: FileFacts) -> list[Finding]:
        parts = facts.path.relative_to(adapters_dir).with_suffix("").parts
        own = None if parts == ("__init__",) else parts[0]
        others = tuple(
            f"{ADAPTER_PACKAGE}.{name}"
            for name in adapters
            if name != own and own not in SHARED_ADAPTER_KITS.get(name, ())
        )
        findings: list[Finding] = []
        for ref in facts.imports:
            host = ref.first_match(HOST_MODULES)
            if host is not None:
                detail = f"{ref.how} of {host}"
                findings.append(_finding(facts, ref.line, "adapter-imports-host", detail))
                continue
            if ref.how == HOW_DYNAMIC and not ref.targets:
                detail = f"{ref.via}(<computed name>)"
                rule = "adapter-unverifiable-dynamic-import"
                findings.append(_finding(facts, ref.line, rule, detail))
                continue
            sibling = ref.first_match(others)
            if sibling is not None:
                rule = "adapter-package-reexport" if own is None else "adapter-cross-import"
                detail = f"{ref.how} of {sibling} from adapter {own or '(package __init__)'}"
                findings.append(_finding(facts, ref.line, rule, detail))
        return findings

    return _scan(adapters_dir, ADAPTER_PACKAGE, check)


# --- host surfaces ---------------------------------------------------------------------------


def scan_host_surface(cli_dir: Path, package_name: str = "memory_plugins.cli") -> list[Finding]:
    """R-ARCH-4 findings: host surfaces under `cli_dir` importing storage or tape adapters."""

    def check(facts: FileFacts) -> list[Finding]:
        findings: list[Finding] = []
        for ref in facts.imports:
            target = ref.first_match(HOST_SURFACE_FORBIDDEN)
            if target is not None:
                detail = f"{ref.how} of {target}"
                findings.append(_finding(facts, ref.line, "host-reaches-storage", detail))
        return findings

    return _scan(cli_dir, package_name, check)


# --- the DuckDB vector path ------------------------------------------------------------------


def scan_vector_path(vectors_dir: Path) -> list[Finding]:
    """R-ARCH-6 findings in the DuckDB vector adapter at `vectors_dir`.

    Docstrings are prose, not SQL, so they may say why there is no HNSW index.
    """

    def check(facts: FileFacts) -> list[Finding]:
        findings: list[Finding] = []
        for line, text in facts.strings:
            if _EXTENSION_KEYWORD.search(text) or _EXTENSION_STATEMENT.search(text):
                findings.append(_finding(facts, line, "vector-path-extension-sql", repr(text)))
            if _APPROXIMATE_INDEX.search(text):
                findings.append(_finding(facts, line, "vector-path-approximate-index", repr(text)))
        for line, method in facts.method_calls:
            if method in _EXTENSION_METHODS:
                detail = f".{method}(...)"
                findings.append(_finding(facts, line, "vector-path-extension-sql", detail))
        return findings

    return _scan(vectors_dir, f"{ADAPTER_PACKAGE}.{vectors_dir.name}", check)
