"""`agent-memory doctor`: is this memory healthy, and if not, what to do (R-HOST-2).

The checks are the service's (`MemoryService.diagnose`): the claim store (schema version,
interrupted clears); the embedding provider (its identity and one timed test embedding);
the vector namespaces of every agent the store holds and of those named with `--agent`
(health — a quarantine among them —, identity against the provider's, coverage of the
agent's ready claims) and their claim and directive counts.
Read-only: it repairs nothing (`reindex` and a restart's recovery do). Plugin options are
never printed — they may hold API keys (R-PROV-5). Exit code 0 when every check passes,
3 when one fails.
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import unstructure
from memory_core.services.memory import AgentHealth, HealthCheck, HealthReport
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import opened

__all__ = ["EXIT_UNHEALTHY", "register", "run"]

EXIT_UNHEALTHY = 3


@attrs.frozen(kw_only=True)
class _Provider:
    plugin: str | None
    identity: EmbeddingIdentity | None = None
    test_embedding_ms: float | None = None
    error: str | None = None  # an exception type name


@attrs.frozen(kw_only=True)
class _DoctorDocument:
    healthy: bool
    data_dir: str
    plugins: dict[str, str]
    schema_version: int | None
    pending_clears: tuple[str, ...]
    provider: _Provider
    agents: tuple[AgentHealth, ...]
    checks: tuple[HealthCheck, ...]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the store, the embedding provider and vector namespaces",
        description="Report store health (schema version, pending clears), the embedding "
        "provider's identity with a timed test embedding, and — for every agent in the data "
        "dir and each --agent — claim counts and vector namespace health. Exit code 3 when a "
        "check fails.",
    )
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        help="also check this agent, even one without claims (repeatable)",
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    return asyncio.run(_doctor(ctx))


async def _doctor(ctx: CommandContext) -> int:
    agents = [validate_agent_id(agent, "--agent") for agent in ctx.args.agent]
    # Doctor observes: open without resuming pending clears, so it can report them.
    async with opened(ctx, resume_clears=False) as memory:
        # Every agent found in the data dir, not only those named: a quarantined namespace
        # must not hide behind a missing --agent (issue 11).
        everyone = list(dict.fromkeys([*agents, *memory.known_agents()]))
        report = await memory.diagnose(everyone)
    document = _document(ctx, report)
    _render(ctx, document)
    return 0 if document.healthy else EXIT_UNHEALTHY


def _document(ctx: CommandContext, report: HealthReport) -> _DoctorDocument:
    embedder = ctx.config.choice("embedding_provider")
    probe = report.provider
    return _DoctorDocument(
        healthy=report.healthy,
        data_dir=str(ctx.data_dir),
        # Names only: plugin options may hold API keys (R-PROV-5).
        plugins={family: choice.name for family, choice in sorted(ctx.config.plugins.items())},
        schema_version=report.schema_version,
        pending_clears=report.pending_clears,
        provider=_Provider(
            plugin=embedder.name if probe.configured and embedder else None,
            identity=probe.identity,
            test_embedding_ms=probe.test_embedding_ms,
            error=probe.error,
        ),
        agents=report.agents,
        checks=report.checks,
    )


def _render(ctx: CommandContext, document: _DoctorDocument) -> None:
    if ctx.out.json_mode:
        ctx.out.document(unstructure(document))
        return
    ctx.out.table(
        ("check", "status", "detail"),
        [(check.name, check.status.value, check.detail) for check in document.checks],
        title=f"agent-memory doctor: {document.data_dir}",
        styles=("bold", None, None),
    )
    ctx.out.line(
        "healthy" if document.healthy else "problems found",
        style="green" if document.healthy else "bold red",
    )
