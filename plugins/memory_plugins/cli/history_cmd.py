"""`agent-memory history CLAIM_ID --agent A`: a claim's lineage (R-LINEAGE-1, R-HOST-2).

Every derivation edge reachable from the claim — supersede, manual edit, merge, reflection —
oldest first, then the audit events of the claims they reach (ids, counts and enums), through
`MemoryService.history` like any host. Ids, kinds and times only: a
claim's text is shown for the claim asked about, never for the ids around it, so a retired
or deleted ancestor is named, not quoted.
"""

from __future__ import annotations

from typing import Any

from memory_core.domain.serialization import unstructure
from memory_core.services.memory.records import claim_status
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import call

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "history",
        help="show a claim's lineage",
        description="The derivation edges reachable from a claim (supersede, manual edit, "
        "merge, reflection), oldest first.",
    )
    parser.add_argument("id", help="claim id")
    parser.add_argument("--agent", required=True, help="the owning agent id")
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    history = call(ctx, lambda memory: memory.history(ctx.args.agent, ctx.args.id))
    if ctx.out.json_mode:
        ctx.out.document(
            {
                "claim_id": history.claim_id,
                "claim": None if history.claim is None else unstructure(history.claim),
                "derivations": [unstructure(edge) for edge in history.derivations],
                "audit": [unstructure(event) for event in history.audit],
                "truncated": history.truncated,
            }
        )
        return 0
    if history.claim is None:
        ctx.out.line(f"{history.claim_id}: deleted (its lineage remains)")
    else:
        claim = history.claim
        ctx.out.line(f"{claim.id} ({claim_status(claim).value}): {claim.content}")
    ctx.out.table(
        ("when", "parent", "kind", "child"),
        [
            (
                edge.created_at.isoformat(timespec="seconds"),
                edge.parent_id,
                edge.kind.value,
                edge.child_id,
            )
            for edge in history.derivations
        ],
        title=f"Lineage of {history.claim_id} ({len(history.derivations)} edges)",
    )
    if history.audit:
        ctx.out.table(
            ("when", "event", "actor", "claim", "refs"),
            [
                (
                    event.created_at.isoformat(timespec="seconds"),
                    event.event,
                    event.actor,
                    event.memory_id or "",
                    ", ".join(f"{key}={value}" for key, value in sorted(event.refs.items())),
                )
                for event in history.audit
            ],
            title=f"Audit of {history.claim_id} and its lineage ({len(history.audit)} events)",
        )
    if history.truncated:
        ctx.out.line("(more edges than shown: the lineage was cut)", style="dim")
    return 0
