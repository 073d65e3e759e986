"""`agent-memory reindex`: embed every claim of an agent again with the configured embedder.

The way back after an embedder change or a damaged vector file (R-PROV-4, R-STORE-2):
the agent's certificate is dropped, a first warm-up rebuilds a namespace made by another
model, every claim's embedding is reset to pending, the embedding drain re-embeds them all
in batches, and a last warm-up checks coverage — deleting orphan vectors — and earns a
fresh ready certificate (R-VEC-4). Exit code 2 when claims are left pending or the
certificate is not earned (the provider or the vector store failed). Claims are never touched
beyond their embedding state; vectors are a projection of them.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import unstructure
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.ingest_cmd import progress_bar
from memory_plugins.cli.memory import opened

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reindex",
        help="re-embed all of an agent's claims",
        description="Reset every claim's embedding, re-embed them with the configured "
        "embedder, and warm the vector namespace (orphans deleted, certificate earned).",
    )
    parser.add_argument("--agent", required=True, help="the owning agent id")
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    return asyncio.run(_reindex(ctx))


async def _reindex(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")
    started = time.monotonic()
    async with opened(ctx) as memory:
        with progress_bar(ctx.out, "Embedding") as update:
            report = await memory.reindex(agent, progress=update)
    seconds = round(time.monotonic() - started, 3)
    healthy = report.ready and not report.pending
    if ctx.out.json_mode:
        ctx.out.document({**unstructure(report), "seconds": seconds})
    else:
        ctx.out.line(
            f"reindexed {agent}: {report.embedded} of {report.claims} claims embedded, "
            f"{report.pending} pending; vector recall {'ready' if report.ready else 'NOT ready'} "
            f"({seconds:.1f} s)",
            style="green" if healthy else "yellow",
        )
    return 0 if healthy else 2
