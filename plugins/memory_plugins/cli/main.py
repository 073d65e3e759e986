"""`agent-memory`: global options, the command table, and the error/exit-code policy (R-HOST-2).

Adding a command: write `memory_plugins/cli/<group>_cmd.py` with

    def register(subparsers) -> None:
        parser = subparsers.add_parser("recall", help="…")
        parser.add_argument(...)
        parser.set_defaults(func=run)

    def run(ctx: CommandContext) -> int:   # ctx.args, ctx.out, ctx.config, ctx.data_dir,
        ...                               # ctx.plugins (a LoadResult); return the exit code

and append the module to `COMMAND_MODULES` below. Print only through `ctx.out` (tables,
lines, or one JSON document when `ctx.out.json_mode`). Raise this library's errors
(`AgentMemoryError` subclasses) for anything the user can fix: `main` prints them as one
line (or a JSON error document) and exits 2, as are usage errors, arguments that are not
valid UTF-8, and OS errors (a data dir that is a file, a full disk): things the user fixes.
Anything else is a bug: traceback, exit 1.
The global options (`--json`, `--data-dir`, …) are accepted before or after the command;
`register` receives a `CommandTable`, whose `global_options` nested sub-commands take as a
parent so the options work after them too.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from memory_core import __version__
from memory_core.domain.errors import AgentMemoryError
from memory_core.domain.validation import check_text
from memory_plugins.cli import (
    benchmark_cmd,
    conflicts_cmd,
    contribution_cmd,
    demo_cmd,
    doctor_cmd,
    eval_cmd,
    history_cmd,
    ingest_cmd,
    maintenance_cmd,
    mcp_cmd,
    persona_cmd,
    plugins_cmd,
    recall_cmd,
    reindex_cmd,
    store_cmds,
)
from memory_plugins.cli.context import DATA_DIR_ENV, DEFAULT_DATA_DIR, CommandContext
from memory_plugins.cli.output import Output
from memory_plugins.config import load_config

__all__ = [
    "COMMAND_MODULES",
    "EXIT_BUG",
    "EXIT_OK",
    "EXIT_USER_ERROR",
    "CommandTable",
    "UsageError",
    "build_parser",
    "main",
]

# One module per command group; each exposes `register(subparsers)`. Order = help order.
COMMAND_MODULES: tuple[ModuleType, ...] = (
    plugins_cmd,
    demo_cmd,
    ingest_cmd,
    recall_cmd,
    contribution_cmd,
    store_cmds,
    reindex_cmd,
    doctor_cmd,
    eval_cmd,
    benchmark_cmd,
    mcp_cmd,
    maintenance_cmd,
    conflicts_cmd,
    persona_cmd,
    history_cmd,
)

EXIT_OK = 0
EXIT_BUG = 1  # an unexpected exception: a bug in this program or a plugin
EXIT_USER_ERROR = 2  # a library error (bad config, missing plugin, …) or bad arguments
EXIT_INTERRUPTED = 130


class UsageError(AgentMemoryError):
    """The command line itself is wrong (an unknown command, a missing or bad option)."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the usage and exits on its own; raising instead lets `main` report a
    # usage error like every other error: one line, or one JSON document under --json.
    # Sub-command parsers are made of the same class (argparse uses type(parent)).
    def error(self, message: str) -> Any:
        command = self.prog.removeprefix("agent-memory").strip()
        raise UsageError(f"{command}: {message}" if command else message)


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # On subcommands the defaults are SUPPRESS, so `agent-memory --json plugins` is not
    # reset by the subparser's own default (an argparse quirk).
    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    group = parser.add_argument_group("global options")
    group.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        default=default(None),
        help=f"data directory (default: ${DATA_DIR_ENV}, the config's data_dir, "
        f"or ./{DEFAULT_DATA_DIR})",
    )
    group.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        default=default(None),
        help="TOML config file: [settings] and [plugins.<family>] choices",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="write one JSON document to stdout (errors too)",
    )
    group.add_argument(
        "--strict-plugins",
        action="store_true",
        default=default(False),
        help="fail on a broken or duplicate plugin instead of skipping it",
    )


class CommandTable:
    """The `subparsers` handed to command modules: every command also takes the globals.

    `global_options` is the parser holding them (`--json`, `--data-dir`, …, defaults
    suppressed so a value given before the command is not overwritten); a command with
    nested sub-commands passes it as a parent of each:
    `actions.add_parser("list", parents=[subparsers.global_options])`.
    """

    def __init__(self, action: Any, global_options: argparse.ArgumentParser) -> None:
        self._action = action
        self.global_options = global_options

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs["parents"] = [*kwargs.get("parents", ()), self.global_options]
        return self._action.add_parser(name, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._action, attribute)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="agent-memory",
        description="Long-term memory for LLM agents: offline by default, plugins for the rest.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _add_global_options(parser, suppress=False)
    shared = _Parser(add_help=False)
    _add_global_options(shared, suppress=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = CommandTable(subparsers, shared)
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code (the console script exits with it)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        _check_arguments(args)
    except SystemExit as exc:  # --help or --version, already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    except AgentMemoryError as exc:
        # The arguments are not parsed, so --json is looked for as given.
        Output(json_mode="--json" in argv).error(exc, prefix="usage error")
        return EXIT_USER_ERROR
    out = Output(json_mode=args.json)
    try:
        context = CommandContext(
            args=args, out=out, config=load_config(args.config), environ=os.environ
        )
        return int(args.func(context) or EXIT_OK)
    except AgentMemoryError as exc:
        out.error(exc)
        return EXIT_USER_ERROR
    except OSError as exc:
        # The environment, not this program: a data dir that is a file, a full disk.
        out.error(exc)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        out.error(KeyboardInterrupt("interrupted"), prefix="interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        out.error(exc, prefix="internal error")
        return EXIT_BUG


def _check_arguments(args: argparse.Namespace) -> None:
    """Text arguments must be valid UTF-8: Python hands invalid bytes over as lone
    surrogates, which would fail deep inside as an untyped UnicodeEncodeError (R-DOM-4).
    Paths are left alone: a file name may be any bytes."""
    for name, value in vars(args).items():
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if isinstance(item, str):
                check_text(item, f"--{name.replace('_', '-')}", allow_blank=True)


if __name__ == "__main__":
    sys.exit(main())
