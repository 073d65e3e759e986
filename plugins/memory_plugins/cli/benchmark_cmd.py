"""`agent-memory benchmark [NAME]`: list or run the benchmarks of the source tree (R-BEYOND-3).

The benchmarks live in the repository's `benchmarks/` folder, next to `plugins/`; they are not
part of the installed package. This command finds that folder from its own location in a
checkout (an editable install) and delegates to `python -m benchmarks NAME`; from an installed
wheel it says so and exits 2. Without NAME it lists what exists.

Text mode: the benchmark prints its own tables to stdout and its progress to stderr, and
writes its JSON results file (`--output PATH`, else the benchmark's default — for `recall`,
`benchmarks/results/recall.json`). `--json`: the tables go to stderr and stdout carries the
results document; the file is written only when `--output` is given.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from memory_core.domain.errors import ConfigError, ValidationError
from memory_plugins.cli.context import CommandContext

__all__ = ["SOURCE_ROOT", "register", "run"]

# plugins/memory_plugins/cli/benchmark_cmd.py -> the checkout's root
SOURCE_ROOT = Path(__file__).resolve().parents[3]
_PACKAGE = "benchmarks"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "benchmark",
        help="run a benchmark against its baselines (source checkout only)",
        description="List the benchmarks, or run one: our latency next to plain baselines "
        "(numpy exact scan, bare FTS5, DuckDB SQL) and the memory-bandwidth bound, measured "
        "in the same run. Needs the repository's benchmarks/ folder (a source checkout).",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="the benchmark; omit to list")
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    parser.add_argument(
        "--sizes", metavar="LIST", help="sizes to measure, comma-separated (the benchmark's own)"
    )
    parser.add_argument("--queries", type=int, metavar="N", help="recall: queries per size")
    parser.add_argument(
        "--output", type=Path, metavar="PATH", help="write the JSON results here as well"
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    registry = _benchmarks()
    catalogue: dict[str, str] = registry.BENCHMARKS
    name = ctx.args.name
    if name is None:
        if ctx.out.json_mode:
            ctx.out.document(
                {"benchmarks": [{"name": n, "measures": text} for n, text in catalogue.items()]}
            )
        else:
            ctx.out.table(
                ["benchmark", "measures"],
                list(catalogue.items()),
                title=f"benchmarks in {SOURCE_ROOT / _PACKAGE}",
            )
        return 0
    if name not in catalogue:
        raise ValidationError("NAME", f"unknown benchmark {name!r}; one of {', '.join(catalogue)}")
    argv = ["--quick"] if ctx.args.quick else []
    if ctx.args.sizes:
        argv += ["--sizes", ctx.args.sizes]
    if ctx.args.queries is not None:
        argv += ["--queries", str(ctx.args.queries)]
    if not ctx.out.json_mode:
        if ctx.args.output is not None:
            argv += ["--json", str(ctx.args.output)]
        return _delegate(registry, name, argv)
    with tempfile.TemporaryDirectory(prefix="agent-memory-benchmark-") as tmp:
        path = ctx.args.output or Path(tmp) / f"{name}.json"
        # stdout carries exactly one JSON document: the benchmark's tables go to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            code = _delegate(registry, name, [*argv, "--json", str(path)])
        if code != 0:
            return code
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    ctx.out.document(document)
    return 0


def _delegate(registry: ModuleType, name: str, argv: list[str]) -> int:
    try:
        return int(registry.run(name, argv))
    except SystemExit as exc:  # the benchmark's own argparse refused the options
        if exc.code in (0, None):
            return 0
        raise ValidationError(
            "options", f"benchmark {name!r} does not accept {' '.join(argv)} (usage above)"
        ) from None


def _benchmarks() -> ModuleType:
    """`benchmarks.__main__` of this checkout, never a same-named package from elsewhere."""
    folder = SOURCE_ROOT / _PACKAGE
    if not (folder / "__main__.py").is_file():
        raise ConfigError(
            "agent-memory benchmark runs from a source checkout: the benchmarks/ folder is not "
            f"installed with the package (looked for {folder}). Clone the repository, "
            "`pip install -e .` there, and run the command (or `python -m benchmarks`) again."
        )
    loaded = sys.modules.get(_PACKAGE)
    if loaded is None:
        spec = importlib.util.spec_from_file_location(
            _PACKAGE, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[_PACKAGE] = loaded
        try:
            spec.loader.exec_module(loaded)
        except BaseException:
            del sys.modules[_PACKAGE]
            raise
    origin = getattr(loaded, "__file__", None)
    if origin is None or Path(origin).resolve().parent != folder:
        raise ConfigError(
            f"another module named {_PACKAGE!r} is already imported ({origin}); "
            f"run `python -m benchmarks` from {SOURCE_ROOT} instead"
        )
    return importlib.import_module(f"{_PACKAGE}.__main__")
