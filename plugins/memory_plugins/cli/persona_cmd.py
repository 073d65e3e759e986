"""`agent-memory persona show|approve|reject|rollback`: the agent's self-model and its
pending draft (reference §8.6). Maintenance may draft a persona; only the user's `approve`
(or `rollback`, back to the previous version) makes one active."""

from __future__ import annotations

from typing import Any

from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import unstructure
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import call

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parents = [subparsers.global_options]
    persona = subparsers.add_parser(
        "persona", help="show, approve, reject or roll back the self-model"
    )
    actions = persona.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show", help="the active persona and the pending draft", parents=parents
    )
    show.add_argument("--agent", required=True, help="the owning agent id")
    show.set_defaults(func=_show)
    for name, text in (("approve", "make the pending draft active"), ("reject", "discard it")):
        parser = actions.add_parser(name, help=text, parents=parents)
        parser.add_argument("--agent", required=True, help="the owning agent id")
        parser.add_argument("draft", help="the draft's id (see `persona show`)")
        parser.set_defaults(func=_decide, approve=name == "approve")
    rollback = actions.add_parser(
        "rollback", help="make the previous version active again", parents=parents
    )
    rollback.add_argument("--agent", required=True, help="the owning agent id")
    rollback.set_defaults(func=_rollback)


def _show(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")
    view = call(ctx, lambda memory: memory.persona(agent))
    if ctx.out.json_mode:
        ctx.out.document({"agent": agent, **unstructure(view)})
        return 0
    ctx.out.line(f"active: {view.active.content if view.active else '(none)'}")
    if view.draft is None:
        ctx.out.line("draft: (none)")
        return 0
    review = " — needs review" if view.needs_review else ""
    ratio = view.change_ratio or 0.0
    ctx.out.line(f"draft {view.draft.id} (changes {ratio:.0%}{review}): {view.draft.content}")
    return 0


def _decide(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")
    draft = ctx.args.draft

    async def work(memory: Any) -> Any:
        if ctx.args.approve:
            return await memory.approve_persona(agent, draft)
        return await memory.reject_persona(agent, draft)

    version = call(ctx, work)
    if ctx.out.json_mode:
        ctx.out.document(unstructure(version))
    else:
        ctx.out.line(f"persona {version.id}: {version.state}", style="green")
    return 0


def _rollback(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")
    version = call(ctx, lambda memory: memory.rollback_persona(agent))
    if ctx.out.json_mode:
        ctx.out.document(unstructure(version))
    else:
        ctx.out.line(f"persona {version.id}: {version.state}", style="green")
    return 0
