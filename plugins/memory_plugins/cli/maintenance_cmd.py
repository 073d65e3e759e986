"""`agent-memory maintenance run|status` and `agent-memory audit`: background maintenance on
demand and its trail (R-MAINT-1/2, R-HOST-2).

`maintenance run --agent A` runs one pass now — the heavy one when `--heavy` is given and
a text provider is configured, else the cheap one, which still merges rewordings the
deterministic rule recognises — and prints what it did. `maintenance status --agent A`
shows the agent's dirty seeds and its last passes; `audit --agent A` the audit trail: ids,
counts and actions, never content.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import unstructure
from memory_core.domain.validation import check_int
from memory_core.services.maintenance import MAX_DIRTY_BATCH, AuditEvent
from memory_core.services.memory import MemoryService
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import call

__all__ = ["register"]

_PASS_EVENTS = ("memory/maintenance", "memory/maintenance_llm")


def register(subparsers: Any) -> None:
    parents = [subparsers.global_options]
    maintenance = subparsers.add_parser("maintenance", help="run or inspect memory maintenance")
    actions = maintenance.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = actions.add_parser("run", help="run one maintenance pass now", parents=parents)
    run.add_argument("--agent", required=True, help="the owning agent id")
    run.add_argument("--heavy", action="store_true", help="the model pass (needs a text provider)")
    run.set_defaults(func=_run)
    status = actions.add_parser("status", help="dirty work and last passes", parents=parents)
    status.add_argument("--agent", required=True, help="the owning agent id")
    status.set_defaults(func=_status)
    audit = subparsers.add_parser("audit", help="an agent's audit trail (no content)")
    audit.add_argument("--agent", required=True, help="the owning agent id")
    audit.add_argument("--limit", type=int, default=50, help="newest events shown (default 50)")
    audit.set_defaults(func=_audit)


def _run(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")

    async def work(memory: MemoryService) -> Any:
        steps: list[str] = []

        def progress(step: str) -> None:
            if not ctx.out.json_mode:
                ctx.out.line(f"  {step}…")
            steps.append(step)

        return await memory.run_maintenance(agent, heavy=ctx.args.heavy or None, progress=progress)

    report = call(ctx, work)
    if ctx.out.json_mode:
        ctx.out.document(unstructure(report))
        return 0
    skipped = f", heavy pass skipped: {report.skipped}" if report.skipped else ""
    ctx.out.line(
        f"{report.mode} pass of {agent}: {report.seeds} seeds, {report.merged} merged, "
        f"{report.settled} settled, {report.deferred} deferred, {report.archived} archived, "
        f"{report.llm_calls} model calls{skipped}",
        style="green",
    )
    return 0


def _status(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")

    def work(memory: MemoryService) -> tuple[int, Sequence[AuditEvent]]:
        return memory.dirty_seeds(agent), memory.audit_events(agent, limit=200)

    dirty, events = call(ctx, work)
    passes = [e for e in events if e.event in _PASS_EVENTS]
    if ctx.out.json_mode:
        ctx.out.document(
            {
                "agent": agent,
                "dirty_seeds": dirty,
                "dirty_seeds_capped": dirty >= MAX_DIRTY_BATCH,
                "last_passes": [unstructure(e) for e in passes[:5]],
            }
        )
        return 0
    shown = f"{dirty}+" if dirty >= MAX_DIRTY_BATCH else str(dirty)
    ctx.out.line(f"{agent}: {shown} dirty seeds")
    ctx.out.table(
        ("when", "event", "status", "refs"),
        [_row(e) for e in passes[:5]],
        title="Last passes",
    )
    return 0


def _audit(ctx: CommandContext) -> int:
    agent = validate_agent_id(ctx.args.agent, "--agent")
    limit = check_int(ctx.args.limit, "--limit", minimum=1)
    events = call(ctx, lambda memory: memory.audit_events(agent, limit=limit))
    if ctx.out.json_mode:
        ctx.out.document({"agent": agent, "events": [unstructure(e) for e in events]})
        return 0
    ctx.out.table(
        ("when", "event", "actor", "status", "claim", "refs"),
        [
            (e.created_at.isoformat(), e.event, e.actor, e.status, e.memory_id, _refs(e))
            for e in events
        ],
        title=f"Audit trail of {agent} ({len(events)})",
    )
    return 0


def _row(event: AuditEvent) -> tuple[str, str, str, str]:
    return (event.created_at.isoformat(), event.event, event.status, _refs(event))


def _refs(event: AuditEvent) -> str:
    return " ".join(f"{key}={value}" for key, value in sorted(event.refs.items()))
