"""`agent-memory plugins`: every registration and every broken plugin (R-ARCH-3, R-HOST-2)."""

from __future__ import annotations

from typing import Any

from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.output import Output
from memory_plugins.hookspecs import PORT_FAMILIES
from memory_plugins.loader import LoadResult
from memory_plugins.registry import PluginFailure, Registration

__all__ = ["plugins_document", "register", "render_plugins", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plugins",
        help="list installed plugins and the ones that failed to load",
        description="List every plugin registration (family, name, distribution, version) "
        "and every plugin that was skipped because it failed to load.",
    )
    parser.add_argument(
        "--family", choices=sorted(PORT_FAMILIES), help="only registrations of this port family"
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    family = getattr(ctx.args, "family", None)
    if ctx.out.json_mode:
        ctx.out.document(plugins_document(ctx.plugins, family=family))
    else:
        render_plugins(ctx.out, ctx.plugins, family=family)
    return 0


def plugins_document(result: LoadResult, *, family: str | None = None) -> dict[str, Any]:
    """`{"registrations": [...], "failures": [...]}`, the `--json` shape of this command."""
    return {
        "registrations": [
            _registration_json(item) for item in result.registry.registrations(family)
        ],
        "failures": [_failure_json(item) for item in result.failures],
    }


def render_plugins(out: Output, result: LoadResult, *, family: str | None = None) -> None:
    """The text form: a registrations table, then the broken plugins, if any."""
    registrations = result.registry.registrations(family)
    out.table(
        ("family", "name", "distribution", "version", "description"),
        [
            (item.family, item.name, item.distribution, item.version or "", item.description)
            for item in registrations
        ],
        title=f"Plugins ({len(registrations)})",
        styles=("cyan", "bold", None, "dim", None),
    )
    if result.failures:
        out.line()
        out.table(
            ("entry point", "distribution", "version", "error"),
            [
                (item.entry_point, item.distribution, item.version or "", item.error)
                for item in result.failures
            ],
            title=f"Failed to load, skipped ({len(result.failures)})",
            styles=("bold red", None, "dim", "red"),
        )


def _registration_json(item: Registration) -> dict[str, Any]:
    return {
        "family": item.family,
        "name": item.name,
        "distribution": item.distribution,
        "version": item.version,
        "description": item.description,
        "capabilities": sorted(item.capabilities),
        "module": item.module,
    }


def _failure_json(item: PluginFailure) -> dict[str, Any]:
    return {
        "entry_point": item.entry_point,
        "distribution": item.distribution,
        "version": item.version,
        "error": item.error,
    }
