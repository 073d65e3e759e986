"""`agent-memory conflicts list|resolve`: open challenges and the user's resolution
(reference §7.8). A challenger is a claim that contradicted a stored one and was kept as a
record instead of a second live claim; resolving it keeps the target, the challenger or
both, with lineage."""

from __future__ import annotations

from typing import Any

from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import unstructure
from memory_core.services.maintenance import Resolution
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import call

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parents = [subparsers.global_options]
    conflicts = subparsers.add_parser("conflicts", help="list or resolve open challenges")
    actions = conflicts.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="open challenges, oldest first", parents=parents)
    listing.add_argument("--agent", required=True, help="the owning agent id")
    listing.set_defaults(func=_list)
    resolve = actions.add_parser(
        "resolve", help="keep the target, the challenger or both", parents=parents
    )
    resolve.add_argument("--agent", required=True, help="the owning agent id")
    resolve.add_argument("challenger", help="the challenger's claim id")
    resolve.add_argument("--keep", required=True, choices=["target", "challenger", "both"])
    resolve.set_defaults(func=_resolve)


def _list(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")
    conflicts = call(ctx, lambda memory: memory.list_conflicts(agent))
    if ctx.out.json_mode:
        ctx.out.document(
            {
                "agent": agent,
                "conflicts": [
                    {"challenger": unstructure(c.challenger), "target": unstructure(c.target)}
                    for c in conflicts
                ],
            }
        )
        return 0
    ctx.out.table(
        ("challenger", "says", "target", "stored"),
        [(c.challenger.id, c.challenger.content, c.target.id, c.target.content) for c in conflicts],
        title=f"Open conflicts of {agent} ({len(conflicts)})",
    )
    return 0


def _resolve(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")
    resolution = Resolution(f"keep_{ctx.args.keep}")
    standing = call(
        ctx, lambda memory: memory.resolve_conflict(agent, ctx.args.challenger, resolution)
    )
    if ctx.out.json_mode:
        ctx.out.document({"resolution": resolution.value, "standing": unstructure(standing)})
    else:
        ctx.out.line(f"{resolution.value}: {standing.id} stands", style="green")
    return 0
