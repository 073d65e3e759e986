"""`agent-memory demo`: placeholder until the read and write paths exist.

It shows what is installed and says plainly that the end-to-end demo is not built yet.
Replace `run` with the real demo (ingest `demo/tape.jsonl`, recall, show the contribution
and manifest) once `open_memory` exists; keep the module and the `register` shape.
"""

from __future__ import annotations

from typing import Any

from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.plugins_cmd import plugins_document, render_plugins

__all__ = ["NOT_BUILT", "register", "run"]

NOT_BUILT = (
    "The end-to-end demo (ingest a sample tape, recall, show the contribution and its "
    "manifest) is not built yet: the read and write paths do not exist."
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="run the offline demo (not built yet: lists the loaded plugins)"
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    if ctx.out.json_mode:
        document = plugins_document(ctx.plugins)
        document["demo"] = {"status": "not-built", "message": NOT_BUILT}
        ctx.out.document(document)
        return 0
    render_plugins(ctx.out, ctx.plugins)
    ctx.out.line()
    ctx.out.line(NOT_BUILT, style="yellow")
    return 0
