"""`agent-memory contribution`: the memory a turn would get, and why (R-HOST-2, R-READ-1/5).

Prepares one turn exactly as a host's `prepare_turn` does and prints both blocks — the
read-only `<context-data>` memory block and the directive block — then the manifest:
what was selected, what was dropped and why, degradations, tokens used of the budget.
`--json` adds the content-free diagnostics: per-stage timings, candidate counts,
degradations. The demo prints its turns with the renderers here.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Mapping
from typing import Any

import attrs

from memory_core.domain.errors import NotFound
from memory_core.domain.manifest import SelectionManifest, StageTimings
from memory_core.domain.serialization import unstructure
from memory_core.services.memory import MemoryService
from memory_core.services.read.retrieval.service import RetrievalDiagnostics
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import opened
from memory_plugins.cli.output import Output

__all__ = [
    "DroppedView",
    "ManifestSummary",
    "SelectedView",
    "manifest_summary",
    "names_of",
    "register",
    "render_contribution",
    "run",
]

DEFAULT_SESSION = "cli"


@attrs.frozen(kw_only=True)
class SelectedView:
    id: str
    kind: str
    tokens: int
    score: float | None = None


@attrs.frozen(kw_only=True)
class DroppedView:
    id: str
    kind: str
    reason: str


@attrs.frozen(kw_only=True)
class ManifestSummary:
    """The manifest in brief: ids, kinds, reasons and token counts — never content."""

    selected: tuple[SelectedView, ...]
    dropped: tuple[DroppedView, ...]
    directives: tuple[SelectedView, ...]
    directives_dropped: tuple[DroppedView, ...]
    degradations: tuple[str, ...]
    tokens_used: int
    token_budget: int
    lanes: dict[str, int]  # tokens used per allocator lane (working, recall, directive, ...)


def manifest_summary(manifest: SelectionManifest) -> ManifestSummary:
    used = manifest.allocation.get("used", {})
    return ManifestSummary(
        selected=tuple(
            SelectedView(
                id=item.id,
                kind=item.kind.value,
                tokens=item.tokens,
                score=None if item.score is None else round(item.score, 4),
            )
            for item in manifest.selected
        ),
        dropped=tuple(
            DroppedView(id=item.id, kind=item.kind, reason=item.reason.value)
            for item in manifest.dropped
        ),
        directives=tuple(
            SelectedView(id=item.id, kind=item.kind.value, tokens=item.tokens)
            for item in manifest.directives.selected
        ),
        directives_dropped=tuple(
            DroppedView(id=item.id, kind=item.kind, reason=item.reason.value)
            for item in manifest.directives.dropped
        ),
        degradations=tuple(d.value for d in manifest.degradations),
        tokens_used=manifest.estimated_tokens,
        token_budget=manifest.token_budget,
        lanes={lane: int(tokens) for lane, tokens in dict(used).items() if tokens},
    )


def names_of(memory: MemoryService, agent_id: str, summary: ManifestSummary) -> dict[str, str]:
    """id -> content for the ids a summary mentions, so a person can read it."""
    names: dict[str, str] = {}
    for item in (*summary.selected, *summary.dropped):
        with contextlib.suppress(NotFound):
            names[item.id] = memory.get_claim(agent_id, item.id).content
    directives = {d.id: d.content for d in memory.list_directives(agent_id)}
    for item in (*summary.directives, *summary.directives_dropped):
        names[item.id] = directives.get(item.id, item.id)
    return names


def render_contribution(
    out: Output,
    memory_text: str | None,
    directive_text: str | None,
    summary: ManifestSummary,
    names: Mapping[str, str],
    *,
    blocks: bool = True,
) -> None:
    """Both blocks as the model would see them (unless `blocks` is False), then the
    manifest in brief."""
    texts = (("Memory block", memory_text), ("Directive block", directive_text))
    for title, text in texts if blocks else ():
        out.heading(title)
        for line in (text or "(empty)").splitlines():
            out.line(f"  {line}", style="dim")
    lanes = ", ".join(f"{lane} {tokens}" for lane, tokens in summary.lanes.items())
    out.line(
        f"Manifest: {len(summary.selected)} selected, {len(summary.dropped)} dropped, "
        f"{len(summary.directives)} directive(s); degradations: "
        f"{', '.join(summary.degradations) or 'none'}; tokens {summary.tokens_used} / "
        f"{summary.token_budget}" + (f" ({lanes})" if lanes else ""),
        style="bold",
    )
    rows = [
        ("selected", item.kind, names.get(item.id, item.id))
        for item in (*summary.selected, *summary.directives)
    ]
    rows += [
        (f"dropped: {item.reason}", item.kind, names.get(item.id, item.id))
        for item in (*summary.dropped, *summary.directives_dropped)
    ]
    if rows:
        out.table(("", "kind", "memory"), rows, styles=("green", "dim", None))


# --- the command -----------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class _Diagnostics:
    """Content-free: where the time went and how many candidates each stage saw."""

    timings: StageTimings | None
    candidates: RetrievalDiagnostics | None  # None when the turn failed open
    degradations: tuple[str, ...]


@attrs.frozen(kw_only=True)
class _ContributionDocument:
    agent: str
    session: str
    outcome: str
    memory_text: str | None
    directive_text: str | None
    anchor_id: str | None
    summary: ManifestSummary
    manifest: SelectionManifest
    diagnostics: _Diagnostics


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "contribution",
        help="show the memory contribution and manifest for a message",
        description="Prepare one turn as a host would and print the memory block, the "
        "directive block and the selection manifest.",
    )
    parser.add_argument("--agent", required=True, help="the owning agent id")
    parser.add_argument("--session", default=DEFAULT_SESSION, help="session id (default: cli)")
    parser.add_argument("--budget", type=int, metavar="N", help="token budget for this turn")
    parser.add_argument("message", metavar="MESSAGE", help="the user's message")
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    return asyncio.run(_contribution(ctx))


async def _contribution(ctx: CommandContext) -> int:
    args = ctx.args
    async with opened(ctx) as memory:
        await memory.warm(args.agent)
        runtime = memory.session(args.agent, args.session)
        turn = await runtime.prepare_turn(
            f"cli-{uuid.uuid4().hex}", args.message, budget_tokens=args.budget
        )
        summary = manifest_summary(turn.manifest)
        if ctx.out.json_mode:
            ctx.out.document(
                unstructure(
                    _ContributionDocument(
                        agent=args.agent,
                        session=args.session,
                        outcome=turn.outcome.value,
                        memory_text=turn.memory_text,
                        directive_text=turn.directive_text,
                        anchor_id=turn.anchor_id,
                        summary=summary,
                        manifest=turn.manifest,
                        diagnostics=_Diagnostics(
                            timings=turn.manifest.timings,
                            candidates=turn.retrieval,
                            degradations=summary.degradations,
                        ),
                    )
                )
            )
            return 0
        render_contribution(
            ctx.out,
            turn.memory_text,
            turn.directive_text,
            summary,
            names_of(memory, args.agent, summary),
        )
    return 0
