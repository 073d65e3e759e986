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
import contextlib
import time
from typing import Any

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import unstructure
from memory_core.services.service import MemoryService
from memory_plugins.api import open_memory_async
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.ingest_cmd import configured_now, progress_bar

__all__ = ["register", "run"]

_POLL_SECONDS = 0.1  # progress bar refresh while the drain runs
_COUNT_LIMIT = 1_000_000  # bound on one pending-count read


@attrs.frozen(kw_only=True)
class _ReindexDocument:
    agent: str
    claims: int  # claims queued for embedding
    embedded: int
    pending: int  # left pending: the provider or vector store failed part-way
    ready: bool  # a ready certificate was earned: vector recall is on
    seconds: float


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
    memory = await open_memory_async(ctx.data_dir, config=ctx.config, registry=ctx.plugins.registry)
    async with contextlib.aclosing(memory):
        if not memory.index.enabled:
            raise ConfigError(
                "reindex needs an embedding_provider and a vector_store (one is 'none')"
            )
        memory.index.invalidate(agent)
        # Warm first: a namespace of another model is rebuilt empty here (R-PROV-4), so the
        # drain below writes into one made for the configured embedder.
        await memory.warm(agent)
        memory.store.reset_embeddings(agent, None, now=configured_now(ctx, ctx.config))
        queued = _pending(memory, agent)
        with progress_bar(ctx.out, "Embedding", queued) as advance:
            drain = asyncio.ensure_future(memory.embed_pending(agent))
            done = 0
            while advance is not None and not drain.done():
                # Only a bar on a terminal pays for these counts.
                await asyncio.wait({drain}, timeout=_POLL_SECONDS)
                now_done = max(0, queued - _pending(memory, agent))
                advance(now_done - done)
                done = now_done
            embedded = await drain
        ready = await memory.warm(agent)
        pending = _pending(memory, agent)
    document = _ReindexDocument(
        agent=agent,
        claims=queued,
        embedded=embedded,
        pending=pending,
        ready=ready,
        seconds=round(time.monotonic() - started, 3),
    )
    if ctx.out.json_mode:
        ctx.out.document(unstructure(document))
    else:
        ctx.out.line(
            f"reindexed {agent}: {embedded} of {queued} claims embedded, {pending} pending; "
            f"vector recall {'ready' if ready else 'NOT ready'} ({document.seconds:.1f} s)",
            style="green" if ready and not pending else "yellow",
        )
    return 0 if ready and not pending else 2


def _pending(memory: MemoryService, agent: str) -> int:
    return len(memory.store.list_pending_embeddings(agent, limit=_COUNT_LIMIT))
