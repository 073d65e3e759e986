"""What one Python file imports and references, read from its AST, for the architecture guards.

import-linter (grimp) sees only static `import` statements, and can be told to drop those under
`if TYPE_CHECKING:`. The guards need more: every import wherever it sits (module level, inside a
function, under `TYPE_CHECKING` — the `else:` branch counting as runtime), literal
`importlib.import_module(...)` / `__import__(...)` targets, and the fully qualified name behind each
dotted reference (`dt.datetime.now` after `import datetime as dt`), so rules can be written over
qualified names instead of over spellings.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DYNAMIC_IMPORT_FUNCTIONS",
    "HOW_DYNAMIC",
    "HOW_STATIC",
    "HOW_TYPE_CHECKING",
    "FileFacts",
    "ImportRef",
    "Reference",
    "iter_python_modules",
    "matches_prefix",
    "read_file_facts",
]

HOW_STATIC = "import"
HOW_TYPE_CHECKING = "import under TYPE_CHECKING"
HOW_DYNAMIC = "dynamic import"

# Calls that load a module (or run code) named at runtime. The value is the index of the argument
# holding the module name, or None when the call runs code rather than naming a module.
DYNAMIC_IMPORT_FUNCTIONS: dict[str, int | None] = {
    "importlib.import_module": 0,
    "importlib.__import__": 0,
    "__import__": 0,
    "builtins.__import__": 0,
    "pkgutil.resolve_name": 0,
    "runpy.run_module": 0,
    "runpy.run_path": None,
    "importlib.util.find_spec": 0,
    "importlib.util.spec_from_file_location": None,
    "importlib.util.spec_from_loader": None,
    "importlib.util.module_from_spec": None,
    "exec": None,
    "eval": None,
}


@dataclass(frozen=True)
class ImportRef:
    """One import: where, how, and the module names it may load (empty when not a literal)."""

    line: int
    how: str
    # `from a import b` may load `a` or the submodule `a.b`; both are candidates.
    targets: tuple[str, ...]
    # The call spelling for dynamic imports (`importlib.import_module`), "" for statements.
    via: str = ""
    # True for `from x import y` (the form an `__init__` re-exports with).
    is_from: bool = False

    def first_match(self, prefixes: tuple[str, ...]) -> str | None:
        """The first candidate target inside one of `prefixes`, if any."""
        for target in self.targets:
            if matches_prefix(target, prefixes):
                return target
        return None


@dataclass(frozen=True)
class Reference:
    """A dotted name used in an expression, resolved through the file's import aliases."""

    line: int
    qualified: str
    spelled: str
    is_call: bool


@dataclass(frozen=True)
class FileFacts:
    """Everything the rules need from one file (shared between copies: never mutate)."""

    path: Path
    module: str
    is_package_init: bool
    imports: list[ImportRef] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    # (line, string) for every str literal that is not a docstring.
    strings: list[tuple[int, str]] = field(default_factory=list)
    # (line, attribute name) for every `x.attr(...)` method call.
    method_calls: list[tuple[int, str]] = field(default_factory=list)


def matches_prefix(name: str, prefixes: tuple[str, ...]) -> bool:
    """True if `name` is one of `prefixes` or a submodule of one."""
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def iter_python_modules(package_dir: Path, package_name: str) -> Iterator[tuple[Path, str]]:
    """Every `.py` file under `package_dir` with its dotted module name, in a stable order."""
    for path in sorted(package_dir.rglob("*.py")):
        relative = path.relative_to(package_dir).with_suffix("")
        parts = [package_name, *relative.parts]
        if parts[-1] == "__init__":
            parts.pop()
        yield path, ".".join(parts)


def read_file_facts(path: Path, module: str) -> FileFacts:
    """Parse `path` (the module named `module`) and collect its imports, references and strings."""
    facts = _facts_for_source(path.read_text(encoding="utf-8"), module, path.name)
    return dataclasses.replace(facts, path=path)


@functools.lru_cache(maxsize=4096)
def _facts_for_source(source: str, module: str, filename: str) -> FileFacts:
    # Cached on the exact text: the guard self-tests rescan many copies of the same tree.
    tree = ast.parse(source, filename=filename)
    facts = FileFacts(path=Path(filename), module=module, is_package_init=filename == "__init__.py")
    aliases = _collect_aliases(tree, facts)
    _Collector(facts, aliases).visit(tree)
    return facts


def _package_of(facts: FileFacts) -> str:
    return facts.module if facts.is_package_init else facts.module.rpartition(".")[0]


def _resolve_from(node: ast.ImportFrom, facts: FileFacts) -> str:
    """The absolute module a (possibly relative) `from ... import` reads from."""
    if node.level == 0:
        return node.module or ""
    base = _package_of(facts).split(".")
    # Level 1 is the current package; each further level goes one package up.
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, node.module] if node.module else base)


def _collect_aliases(tree: ast.Module, facts: FileFacts) -> dict[str, str]:
    """Local name -> qualified name for every import binding in the file (flow-insensitive)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    head = alias.name.partition(".")[0]
                    aliases[head] = head
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_from(node, facts)
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
    return aliases


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _is_type_checking_test(node: ast.expr) -> bool:
    # Matched by name, as grimp does: `TYPE_CHECKING`, `typing.TYPE_CHECKING`, `t.TYPE_CHECKING`.
    dotted = _dotted(node)
    return dotted is not None and dotted.rpartition(".")[2] == "TYPE_CHECKING"


def _docstring_nodes(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                ids.add(id(body[0].value))
    return ids


class _Collector(ast.NodeVisitor):
    def __init__(self, facts: FileFacts, aliases: dict[str, str]) -> None:
        self._facts = facts
        self._aliases = aliases
        self._type_checking = 0
        self._docstrings: set[int] = set()

    def _qualify(self, dotted: str) -> str:
        head, dot, rest = dotted.partition(".")
        if head in self._aliases:
            return self._aliases[head] + dot + rest
        return dotted

    def _how(self) -> str:
        return HOW_TYPE_CHECKING if self._type_checking else HOW_STATIC

    def visit_Module(self, node: ast.Module) -> None:
        self._docstrings = _docstring_nodes(node)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking_test(node.test):
            self.generic_visit(node)
            return
        self._type_checking += 1
        for statement in node.body:
            self.visit(statement)
        self._type_checking -= 1
        # The else branch of `if TYPE_CHECKING:` runs for real.
        for statement in node.orelse:
            self.visit(statement)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._facts.imports.append(ImportRef(node.lineno, self._how(), (alias.name,)))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = _resolve_from(node, self._facts)
        if source == "__future__":
            return
        targets = (source, *(f"{source}.{a.name}" for a in node.names if a.name != "*"))
        self._facts.imports.append(ImportRef(node.lineno, self._how(), targets, is_from=True))

    def visit_Call(self, node: ast.Call) -> None:
        dotted = _dotted(node.func)
        if dotted is not None:
            qualified = self._qualify(dotted)
            if qualified in DYNAMIC_IMPORT_FUNCTIONS:
                self._record_dynamic_import(node, qualified)
        if isinstance(node.func, ast.Attribute):
            self._facts.method_calls.append((node.lineno, node.func.attr))
        self._record_reference(node.func, is_call=True)
        for argument in [*node.args, *node.keywords]:
            self.visit(argument)

    def _record_dynamic_import(self, node: ast.Call, qualified: str) -> None:
        index = DYNAMIC_IMPORT_FUNCTIONS[qualified]
        targets: tuple[str, ...] = ()
        if index is not None and len(node.args) > index:
            argument = node.args[index]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                # `pkgutil.resolve_name("pkg.mod:attr")` names the module before the colon.
                name = argument.value.partition(":")[0]
                if name.startswith("."):
                    name = _package_of(self._facts) + name
                targets = (name,)
        self._facts.imports.append(ImportRef(node.lineno, HOW_DYNAMIC, targets, via=qualified))

    def _record_reference(self, node: ast.expr, *, is_call: bool) -> None:
        dotted = _dotted(node)
        if dotted is None:
            # Not a plain dotted name (`f().x`, `a[0].b`): its parts may still hold references.
            self.visit(node)
            return
        self._facts.references.append(
            Reference(node.lineno, self._qualify(dotted), dotted, is_call=is_call)
        )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _dotted(node) is None:
            self.generic_visit(node)
        else:
            self._record_reference(node, is_call=False)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._record_reference(node, is_call=False)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self._docstrings:
            self._facts.strings.append((node.lineno, node.value))
