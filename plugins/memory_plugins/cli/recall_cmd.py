"""`agent-memory recall`: what memory finds for a query, ranked and explained (R-HOST-2).

The same call as the model's `memory_recall` tool: owner and scope candidates from FTS and
vectors, re-validated, suppression and temporal eligibility applied, scored (R-READ-3/8).
Recall counts as access, as the tool's does. Without `--session`, session-scoped memories
are left out: missing context never widens (R-SCOPE-1).
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from memory_core.domain.serialization import unstructure
from memory_core.services.read.retrieval.service import RetrievalDiagnostics, RetrievalResult
from memory_core.services.read.scoring import ScoredItem
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import opened
from memory_plugins.cli.output import Output

__all__ = ["RecallItemView", "recall_views", "register", "render_recall", "run"]


@attrs.frozen(kw_only=True)
class RecallItemView:
    id: str
    kind: str
    content: str
    score: float
    similarity: float | None
    sources: tuple[str, ...]
    temporal: str  # the policy's label now, or "timeless"
    when: str | None  # the rendered annotation, e.g. "current state; from 2026-04"


def _view(item: ScoredItem) -> RecallItemView:
    return RecallItemView(
        id=item.claim.id,
        kind=item.claim.kind.value,
        content=item.claim.content,
        score=round(item.score, 4),
        similarity=None if item.similarity is None else round(item.similarity, 4),
        sources=tuple(source.value for source in item.sources),
        temporal=item.assessment.label or "timeless",
        when=item.assessment.annotation,
    )


def recall_views(result: RetrievalResult) -> tuple[RecallItemView, ...]:
    return tuple(_view(item) for item in result.items)


def render_recall(out: Output, views: tuple[RecallItemView, ...], *, title: str) -> None:
    out.table(
        ("score", "kind", "content", "temporal", "via"),
        [(f"{v.score:.3f}", v.kind, v.content, v.temporal, "+".join(v.sources)) for v in views],
        title=title,
        styles=("green", "dim", None, "cyan", "dim"),
    )


@attrs.frozen(kw_only=True)
class _RecallDocument:
    agent: str
    session: str | None
    items: tuple[RecallItemView, ...]
    degradations: tuple[str, ...]
    diagnostics: RetrievalDiagnostics


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "recall",
        help="search an agent's memories",
        description="Recall memories for a query, as the memory_recall tool does.",
    )
    parser.add_argument("--agent", required=True, help="the owning agent id")
    parser.add_argument("--session", help="current session id (adds its session-scoped memories)")
    parser.add_argument("--top-k", type=int, metavar="K", help="at most K results (1..100)")
    parser.add_argument("query", metavar="QUERY", help="what to look for")
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    return asyncio.run(_recall(ctx))


async def _recall(ctx: CommandContext) -> int:
    args = ctx.args
    async with opened(ctx) as memory:
        # A process starts cold: earn the vector certificate first, or recall is FTS-only.
        await memory.warm(args.agent)
        result = await memory.recall(
            args.agent, args.query, session_id=args.session, top_k=args.top_k
        )
    views = recall_views(result)
    degradations = tuple(d.value for d in result.degradations)
    if ctx.out.json_mode:
        ctx.out.document(
            unstructure(
                _RecallDocument(
                    agent=args.agent,
                    session=args.session,
                    items=views,
                    degradations=degradations,
                    diagnostics=result.diagnostics,
                )
            )
        )
        return 0
    render_recall(ctx.out, views, title=f"Recall for agent {args.agent} ({len(views)})")
    if degradations:
        ctx.out.line(f"degradations: {', '.join(degradations)}", style="yellow")
    return 0
