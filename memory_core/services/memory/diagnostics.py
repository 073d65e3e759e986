"""Diagnostics: is this memory healthy, and if not, what to do (R-HOST-2, R-PROV-4/5).

Checks, in order: the claim store (schema version when the store reports one, interrupted
clears); the embedding provider (its identity and one timed test embedding); for each agent
asked about, the vector namespace (health, identity against the provider's, coverage of
the agent's ready claims) and its claim and directive counts. Read-only: nothing is
repaired here (`reindex` and a restart's recovery do). The report is content-free: counts,
identities and exception type names — never claim text, never a provider's options.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum

import attrs

from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.claims import EmbeddingIdentity, EmbeddingState
from memory_core.domain.errors import AgentMemoryError
from memory_core.domain.scope import validate_agent_id
from memory_core.services.memory.parts import MemoryParts

__all__ = [
    "AgentHealth",
    "CheckStatus",
    "HealthCheck",
    "HealthReport",
    "MemoryDiagnostics",
    "ProviderProbe",
]

# Breaker bookkeeping of the test embedding runs under this agent; it stores nothing.
PROBE_AGENT = "agent-memory-doctor"
PROBE_TEXT = "agent-memory doctor: a short test sentence to embed."
_PROBE_SECONDS = 30.0
_COUNT_LIMIT = 1_000_000


class CheckStatus(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@attrs.frozen(kw_only=True)
class HealthCheck:
    name: str
    status: CheckStatus
    detail: str


@attrs.frozen(kw_only=True)
class ProviderProbe:
    configured: bool
    identity: EmbeddingIdentity | None = None
    test_embedding_ms: float | None = None
    error: str | None = None  # an exception type name, never its message


@attrs.frozen(kw_only=True)
class AgentHealth:
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
    # Ready under another model's identity: no namespace of the provider's can cover them
    # (a publish/reset pair cut short by a crash of an older version, R-VEC-2).
    stale_ready_claims: int | None = None
    # Claims whose text the embedding provider refused alone (R-WRITE-6): found by recall
    # through full-text search only, until their content changes.
    embedding_errors: int = 0
    # Vector cleanups still owed (R-FORGET-1): a vector of a claim forgotten while its
    # embedding was in flight, or whose delete was cut, that a later pass must remove.
    vector_cleanups: int = 0


@attrs.frozen(kw_only=True)
class HealthReport:
    schema_version: int | None
    pending_clears: tuple[str, ...]
    provider: ProviderProbe
    agents: tuple[AgentHealth, ...]
    checks: tuple[HealthCheck, ...]

    @property
    def healthy(self) -> bool:
        return all(check.status is not CheckStatus.FAIL for check in self.checks)


class MemoryDiagnostics(MemoryParts):
    async def diagnose(self, agent_ids: Sequence[str] = ()) -> HealthReport:
        """Run every check; the agents named get their namespace checked too."""
        agents = [validate_agent_id(agent, "agent") for agent in agent_ids]
        schema = self._schema_version()
        clears = tuple(job.agent_id for job in self.store.pending_clears())
        provider = await self._probe_provider()
        reports = [await self._inspect_agent(agent, provider.identity) for agent in agents]
        checks = (
            _store_check(schema),
            _clears_check(clears),
            _scrub_check(self.store),
            _provider_check(provider),
            *(_vector_check(report, provider.identity) for report in reports),
        )
        return HealthReport(
            schema_version=schema,
            pending_clears=clears,
            provider=provider,
            agents=tuple(reports),
            checks=checks,
        )

    def known_agents(self) -> list[str]:
        """The agents the claim store holds, when it can list them (SQLite can); else none.
        Doctor checks each, so a quarantined namespace is reported without `--agent`."""
        listing = getattr(self.store, "agent_ids", None)
        return list(listing()) if callable(listing) else []

    def _schema_version(self) -> int | None:
        # Not part of the claim store port: reported when the store offers it.
        value = getattr(self.store, "schema_version", None)
        value = value() if callable(value) else value
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    async def _probe_provider(self) -> ProviderProbe:
        if not self.gateway.embedding_configured:
            return ProviderProbe(configured=False)
        started = self._infra.monotonic()
        try:
            batch = await self.gateway.embed_batch(
                agent_id=PROBE_AGENT,
                texts=[PROBE_TEXT],
                deadline=self._deadline(_PROBE_SECONDS),
                cancel=CancellationToken(),
            )
        except AgentMemoryError as exc:
            return ProviderProbe(configured=True, error=type(exc).__name__)
        elapsed = 1000.0 * (self._infra.monotonic() - started)
        (vector,) = batch.vectors
        norm = math.sqrt(sum(x * x for x in vector))
        return ProviderProbe(
            configured=True,
            identity=batch.identity,
            test_embedding_ms=round(elapsed, 1),
            error=None if math.isfinite(norm) and norm > 0 else "degenerate test vector",
        )

    async def _inspect_agent(self, agent: str, identity: EmbeddingIdentity | None) -> AgentHealth:
        claims = self.store.list_claims(agent, include_inactive=True, limit=_COUNT_LIMIT)
        states = Counter("superseded" if c.superseded_by else c.lifecycle.value for c in claims)
        directives = Counter(d.status.value for d in self.store.list_directives(agent))
        report = AgentHealth(
            agent=agent,
            claims=dict(sorted(states.items())),
            pending_embeddings=len(self.store.list_pending_embeddings(agent, limit=_COUNT_LIMIT)),
            embedding_errors=sum(c.embedding_state is EmbeddingState.ERROR for c in claims),
            directives=dict(sorted(directives.items())),
            vector_cleanups=sum(
                not row.keep
                for row in self.store.pending_vector_cleanups(agent, limit=_COUNT_LIMIT)
            ),
        )
        vectors = self.index.vectors
        if vectors is None or identity is None:
            return report
        deadline, cancel = self._deadline(_PROBE_SECONDS), CancellationToken()
        try:
            stored_identity = await vectors.stored_identity(agent, deadline=deadline, cancel=cancel)
            stored = set(await vectors.list_ids(agent, deadline=deadline, cancel=cancel))
        except AgentMemoryError as exc:
            return attrs.evolve(report, vector_health=f"error ({type(exc).__name__})")
        ready = set(self.store.list_ready_ids(agent, identity))
        stale = sum(
            1
            for c in claims
            if c.embedding_state is EmbeddingState.READY and c.embedding != identity
        )
        return attrs.evolve(
            report,
            vector_health=vectors.health(agent).value,
            vector_identity=stored_identity,
            vectors=len(stored),
            ready_claims=len(ready),
            missing_vectors=len(ready - stored),
            orphan_vectors=len(stored - ready),
            stale_ready_claims=stale,
        )


def _store_check(schema: int | None) -> HealthCheck:
    detail = (
        f"schema version {schema}"
        if schema is not None
        else "opened (the plugin does not report a schema version)"
    )
    return HealthCheck(name="claim store", status=CheckStatus.OK, detail=detail)


def _clears_check(clears: tuple[str, ...]) -> HealthCheck:
    if not clears:
        return HealthCheck(name="pending clears", status=CheckStatus.OK, detail="none")
    return HealthCheck(
        name="pending clears",
        status=CheckStatus.WARN,
        detail=f"interrupted clears of {', '.join(clears)}: they resume on the next service start",
    )


def _scrub_check(store: object) -> HealthCheck:
    # Not part of the claim store port: a store whose checkpoint can be blocked (SQLite by
    # a reader's snapshot) says whether forgetting still owes a scrub (R-PRIV-3).
    pending = getattr(store, "scrub_pending", None)
    if pending is not True:
        return HealthCheck(name="forensic scrub", status=CheckStatus.OK, detail="none pending")
    return HealthCheck(
        name="forensic scrub",
        status=CheckStatus.WARN,
        detail="a checkpoint after forgetting was blocked by another reader; it completes "
        "at the next write or open",
    )


def _provider_check(provider: ProviderProbe) -> HealthCheck:
    name = "embedding provider"
    if not provider.configured:
        return HealthCheck(name=name, status=CheckStatus.WARN, detail="none: recall is FTS-only")
    if provider.error is not None or provider.identity is None:
        return HealthCheck(
            name=name,
            status=CheckStatus.FAIL,
            detail=f"test embedding failed ({provider.error})",
        )
    identity = provider.identity
    return HealthCheck(
        name=name,
        status=CheckStatus.OK,
        detail=f"{identity.provider} {identity.model} ({identity.dim} dims): test embedding "
        f"in {provider.test_embedding_ms:.0f} ms",
    )


def _vector_check(report: AgentHealth, identity: EmbeddingIdentity | None) -> HealthCheck:
    name = f"agent {report.agent}"
    counts = ", ".join(f"{n} {state}" for state, n in report.claims.items()) or "no claims"
    if report.vector_health is None:
        return HealthCheck(
            name=name, status=CheckStatus.OK, detail=f"{counts}; no vectors configured"
        )
    if report.vector_health != "available":
        return HealthCheck(
            name=name, status=CheckStatus.FAIL, detail=f"{counts}; vectors {report.vector_health}"
        )
    if report.vector_identity is not None and report.vector_identity != identity:
        return HealthCheck(
            name=name,
            status=CheckStatus.FAIL,
            detail=f"{counts}; vectors were made by another model "
            f"({report.vector_identity.provider} {report.vector_identity.model}): run reindex",
        )
    if report.stale_ready_claims:
        return HealthCheck(
            name=name,
            status=CheckStatus.FAIL,
            detail=f"{counts}; {report.stale_ready_claims} claims are marked embedded by "
            "another model and have no vector: run reindex",
        )
    detail = (
        f"{counts}; {report.vectors} vectors, {report.missing_vectors} missing, "
        f"{report.orphan_vectors} orphans, {report.pending_embeddings} pending, "
        f"{report.embedding_errors} refused by the embedder, "
        f"{report.vector_cleanups} vector cleanups owed"
    )
    healthy = not (
        report.missing_vectors
        or report.orphan_vectors
        or report.pending_embeddings
        or report.embedding_errors
        or report.vector_cleanups
    )
    # Missing and orphan vectors are repaired by the next warm-up; say how to force it.
    return HealthCheck(
        name=name,
        status=CheckStatus.OK if healthy else CheckStatus.WARN,
        detail=detail if healthy else f"{detail}: run reindex to repair now",
    )
