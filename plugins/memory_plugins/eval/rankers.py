"""The four rankings a retrieval evaluation compares, each over the real stores.

- `fts` — the lexical source alone: the production keyword extraction (OR of terms), FTS5
  bm25 order, owner and scope applied before LIMIT, re-validated by the store. No scoring.
- `vector` — the vector source alone: the query embedded through the provider gateway, the
  vector store's exact scan under the agent's ready certificate, the production similarity
  threshold, every hit re-validated against the authoritative row (owner, scope, lifecycle,
  embedding identity) and kept in similarity order. Computed here from the vector store
  rather than through a switch in `RetrievalService`: the service has no vector-only purpose
  and should not grow one for an evaluation.
- `lexical` — the whole retrieval service with no embedder: what an FTS-only installation
  returns (bm25 rank only through the RRF term, then confidence, recency and importance).
- `hybrid` — the whole retrieval service with vectors, the product default.

The two service modes use purpose INJECTION: the per-turn path, RECALL's candidates and
scores without access accounting, so one query cannot change the next one's ranking. Every
ranking is a list of claim ids, best first.
"""

from __future__ import annotations

from enum import StrEnum

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.scope import ScopeFilter
from memory_core.services.read.keywords import search_terms
from memory_core.services.read.retrieval.service import (
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalService,
)
from memory_core.services.read.scoring import ScoringPolicy
from memory_plugins.eval.harness import EvalMemory

__all__ = ["MAX_DEPTH", "RankMode", "Rankers"]

MAX_DEPTH = 100  # the retrieval service's top-K ceiling
_SECONDS = 60.0


class RankMode(StrEnum):
    FTS = "fts"
    VECTOR = "vector"
    LEXICAL = "lexical"
    HYBRID = "hybrid"

    @property
    def needs_embedder(self) -> bool:
        return self in (RankMode.VECTOR, RankMode.HYBRID)


class Rankers:
    """Rankings over one evaluation memory; `scoring` overrides the settings' policy."""

    def __init__(self, memory: EvalMemory, *, scoring: ScoringPolicy | None = None) -> None:
        self._memory = memory
        self._scoring = scoring or ScoringPolicy.from_settings(memory.settings)
        service = memory.service
        self._hybrid = RetrievalService(
            store=service.store,
            domain_clock=memory.clock,
            infra_clock=memory.clock,
            calls=service.retrieval.calls,
            index=service.index,
            gateway=service.gateway,
            settings=memory.settings,
            scoring=self._scoring,
        )
        self._lexical = RetrievalService(
            store=service.store,
            domain_clock=memory.clock,
            infra_clock=memory.clock,
            calls=service.retrieval.calls,
            settings=memory.settings,
            scoring=self._scoring,
        )
        self.degraded = 0  # queries whose vector path failed (counted, never hidden)

    @property
    def scoring(self) -> ScoringPolicy:
        return self._scoring

    async def rank(self, mode: RankMode, agent_id: str, text: str, depth: int) -> list[str]:
        if mode is RankMode.FTS:
            return self.fts(agent_id, text, depth)
        if mode is RankMode.VECTOR:
            return await self.vector(agent_id, text, depth)
        service = self._hybrid if mode is RankMode.HYBRID else self._lexical
        return await self._service(service, agent_id, text, depth)

    def fts(self, agent_id: str, text: str, depth: int) -> list[str]:
        terms = search_terms(text)
        if not terms:
            return []
        store = self._memory.service.store
        scope = ScopeFilter.agent_only()
        hits = store.search_fts(agent_id, terms, scope_filter=scope, limit=depth)
        claims = store.list_applicable_by_ids(
            agent_id, [hit.claim_id for hit in hits], scope_filter=scope
        )
        return [claim.id for claim in claims]

    async def vector(self, agent_id: str, text: str, depth: int) -> list[str]:
        service = self._memory.service
        index = service.index
        certificate = index.certificate(agent_id)
        if index.vectors is None or certificate is None or not text.strip():
            return []
        deadline, cancel = self._deadline(), CancellationToken()
        embedding = await service.gateway.embed_query(
            agent_id=agent_id, text=text, deadline=deadline, cancel=cancel, warm_recall=False
        )
        if embedding.vector is None:
            self.degraded += 1
            return []
        hits = await index.vectors.query(
            agent_id, certificate, embedding.vector, depth, deadline=deadline, cancel=cancel
        )
        threshold = self._memory.settings.similarity_threshold
        kept = [hit.claim_id for hit in hits if hit.similarity >= threshold]
        claims = service.store.list_applicable_by_ids(
            agent_id, kept, scope_filter=ScopeFilter.agent_only(), embedding=certificate.identity
        )
        return [claim.id for claim in claims]

    async def _service(
        self, service: RetrievalService, agent_id: str, text: str, depth: int
    ) -> list[str]:
        result = await service.retrieve(
            RetrievalRequest(
                agent_id=agent_id,
                query=text,
                purpose=RetrievalPurpose.INJECTION,
                top_k=min(depth, MAX_DEPTH),
            ),
            deadline=self._deadline(),
            cancel=CancellationToken(),
        )
        if result.degradations:
            self.degraded += 1
        return [item.claim.id for item in result.items]

    def _deadline(self) -> Deadline:
        return Deadline.after(self._memory.clock, _SECONDS)
