"""`agent-memory doctor`: is this memory healthy, and if not, what to do (R-HOST-2).

Checks, in order: the claim store (schema version when the plugin reports one, interrupted
clears); the embedding provider (its identity and one timed test embedding); the vector
namespaces of the agents named with `--agent` (health, identity against the provider's,
coverage of the agent's ready claims) and their claim and directive counts. Read-only: it
repairs nothing (`reindex` and a restart's recovery do). Plugin options are never printed —
they may hold API keys (R-PROV-5). Exit code 0 when every check passes, 3 when one fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter
from typing import Any

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import AgentMemoryError
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import unstructure
from memory_core.services.service import MemoryService
from memory_plugins.api import open_memory
from memory_plugins.cli.context import CommandContext
from memory_plugins.config import MemoryConfig

__all__ = ["EXIT_UNHEALTHY", "register", "run"]

EXIT_UNHEALTHY = 3
PROBE_AGENT = "agent-memory-doctor"  # breaker bookkeeping of the test embedding; stores nothing
PROBE_TEXT = "agent-memory doctor: a short test sentence to embed."
_SECONDS = 30.0
_COUNT_LIMIT = 1_000_000

OK, WARN, FAIL = "ok", "warn", "fail"


@attrs.frozen(kw_only=True)
class _Check:
    name: str
    status: str  # ok | warn | fail
    detail: str


@attrs.frozen(kw_only=True)
class _Provider:
    plugin: str | None
    identity: EmbeddingIdentity | None = None
    test_embedding_ms: float | None = None
    error: str | None = None  # an exception type name


@attrs.frozen(kw_only=True)
class _Agent:
    agent: str
    claims: dict[str, int]  # active / superseded / archived / conflicted
    pending_embeddings: int
    directives: dict[str, int]
    vector_health: str | None = None
    vector_identity: EmbeddingIdentity | None = None
    vectors: int | None = None
    ready_claims: int | None = None  # ready with the provider's identity
    missing_vectors: int | None = None
    orphan_vectors: int | None = None


@attrs.frozen(kw_only=True)
class _DoctorDocument:
    healthy: bool
    data_dir: str
    plugins: dict[str, str]
    schema_version: int | None
    pending_clears: tuple[str, ...]
    provider: _Provider
    agents: tuple[_Agent, ...]
    checks: tuple[_Check, ...]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the store, the embedding provider and vector namespaces",
        description="Report store health (schema version, pending clears), the embedding "
        "provider's identity with a timed test embedding, and — for each --agent — claim "
        "counts and vector namespace health. Exit code 3 when a check fails.",
    )
    parser.add_argument(
        "--agent", action="append", default=[], help="also check this agent (repeatable)"
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    return asyncio.run(_doctor(ctx))


async def _doctor(ctx: CommandContext) -> int:
    agents = [validate_agent_id(agent, "--agent") for agent in ctx.args.agent]
    checks: list[_Check] = []
    # Doctor observes: open without resuming pending clears, so it can report them.
    memory = await asyncio.to_thread(
        open_memory, ctx.data_dir, config=ctx.config, registry=ctx.plugins.registry
    )
    async with contextlib.aclosing(memory):
        schema = _schema_version(memory)
        checks.append(
            _Check(
                name="claim store",
                status=OK,
                detail=f"schema version {schema}"
                if schema is not None
                else "opened (the plugin does not report a schema version)",
            )
        )
        clears = tuple(job.agent_id for job in memory.store.pending_clears())
        checks.append(
            _Check(
                name="pending clears",
                status=WARN if clears else OK,
                detail=f"interrupted clears of {', '.join(clears)}: they resume on the next "
                "service start"
                if clears
                else "none",
            )
        )
        provider = await _probe_provider(memory, ctx.config)
        checks.append(_provider_check(provider))
        reports = []
        for agent in agents:
            report = await _inspect_agent(memory, agent, provider.identity)
            reports.append(report)
            checks.append(_vector_check(report, provider.identity))
    document = _DoctorDocument(
        healthy=all(check.status != FAIL for check in checks),
        data_dir=str(ctx.data_dir),
        plugins={family: choice.name for family, choice in sorted(ctx.config.plugins.items())},
        schema_version=schema,
        pending_clears=clears,
        provider=provider,
        agents=tuple(reports),
        checks=tuple(checks),
    )
    _render(ctx, document)
    return 0 if document.healthy else EXIT_UNHEALTHY


def _schema_version(memory: MemoryService) -> int | None:
    # Not part of the ClaimStore port: reported when the plugin offers it.
    value = getattr(memory.store, "schema_version", None)
    value = value() if callable(value) else value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def _probe_provider(memory: MemoryService, config: MemoryConfig) -> _Provider:
    choice = config.choice("embedding_provider")
    if not memory.gateway.embedding_configured:
        return _Provider(plugin=None)
    deadline = Deadline.after(_Monotonic(), _SECONDS)
    cancel = CancellationToken()
    started = time.perf_counter()
    try:
        batch = await memory.gateway.embed_batch(
            agent_id=PROBE_AGENT, texts=[PROBE_TEXT], deadline=deadline, cancel=cancel
        )
    except AgentMemoryError as exc:
        return _Provider(plugin=choice.name if choice else None, error=type(exc).__name__)
    elapsed = 1000.0 * (time.perf_counter() - started)
    (vector,) = batch.vectors
    norm = math.sqrt(sum(x * x for x in vector))
    error = None if math.isfinite(norm) and norm > 0 else "degenerate test vector"
    return _Provider(
        plugin=choice.name if choice else None,
        identity=batch.identity,
        test_embedding_ms=round(elapsed, 1),
        error=error,
    )


def _provider_check(provider: _Provider) -> _Check:
    if provider.plugin is None:
        return _Check(name="embedding provider", status=WARN, detail="none: recall is FTS-only")
    if provider.error is not None or provider.identity is None:
        return _Check(
            name="embedding provider",
            status=FAIL,
            detail=f"{provider.plugin}: test embedding failed ({provider.error})",
        )
    identity = provider.identity
    return _Check(
        name="embedding provider",
        status=OK,
        detail=f"{identity.provider} {identity.model} ({identity.dim} dims): test embedding "
        f"in {provider.test_embedding_ms:.0f} ms",
    )


async def _inspect_agent(
    memory: MemoryService, agent: str, identity: EmbeddingIdentity | None
) -> _Agent:
    claims = memory.store.list_claims(agent, include_inactive=True, limit=_COUNT_LIMIT)
    states = Counter("superseded" if c.superseded_by else c.lifecycle.value for c in claims)
    directives = Counter(d.status.value for d in memory.list_directives(agent))
    pending = len(memory.store.list_pending_embeddings(agent, limit=_COUNT_LIMIT))
    report = _Agent(
        agent=agent,
        claims=dict(sorted(states.items())),
        pending_embeddings=pending,
        directives=dict(sorted(directives.items())),
    )
    vectors = memory.index.vectors
    if vectors is None or identity is None:
        return report
    deadline = Deadline.after(_Monotonic(), _SECONDS)
    cancel = CancellationToken()
    try:
        stored_identity = await vectors.stored_identity(agent, deadline=deadline, cancel=cancel)
        stored = set(await vectors.list_ids(agent, deadline=deadline, cancel=cancel))
    except AgentMemoryError as exc:
        return attrs.evolve(report, vector_health=f"error ({type(exc).__name__})")
    ready = set(memory.store.list_ready_ids(agent, identity))
    return attrs.evolve(
        report,
        vector_health=vectors.health(agent).value,
        vector_identity=stored_identity,
        vectors=len(stored),
        ready_claims=len(ready),
        missing_vectors=len(ready - stored),
        orphan_vectors=len(stored - ready),
    )


def _vector_check(report: _Agent, identity: EmbeddingIdentity | None) -> _Check:
    name = f"agent {report.agent}"
    counts = ", ".join(f"{n} {state}" for state, n in report.claims.items()) or "no claims"
    if report.vector_health is None:
        return _Check(name=name, status=OK, detail=f"{counts}; no vectors configured")
    if report.vector_health != "available":
        return _Check(name=name, status=FAIL, detail=f"{counts}; vectors {report.vector_health}")
    if report.vector_identity is not None and report.vector_identity != identity:
        return _Check(
            name=name,
            status=FAIL,
            detail=f"{counts}; vectors were made by another model "
            f"({report.vector_identity.provider} {report.vector_identity.model}): run reindex",
        )
    detail = (
        f"{counts}; {report.vectors} vectors, {report.missing_vectors} missing, "
        f"{report.orphan_vectors} orphans, {report.pending_embeddings} pending"
    )
    healthy = not (report.missing_vectors or report.orphan_vectors or report.pending_embeddings)
    # Missing and orphan vectors are repaired by the next warm-up; say how to force it.
    return _Check(
        name=name,
        status=OK if healthy else WARN,
        detail=detail if healthy else f"{detail}: run reindex to repair now",
    )


class _Monotonic:
    """The InfraClock for the doctor's own deadlines."""

    def monotonic(self) -> float:
        return time.monotonic()


def _render(ctx: CommandContext, document: _DoctorDocument) -> None:
    if ctx.out.json_mode:
        ctx.out.document(unstructure(document))
        return
    ctx.out.table(
        ("check", "status", "detail"),
        [(check.name, check.status, check.detail) for check in document.checks],
        title=f"agent-memory doctor: {document.data_dir}",
        styles=("bold", None, None),
    )
    ctx.out.line(
        "healthy" if document.healthy else "problems found",
        style="green" if document.healthy else "bold red",
    )
