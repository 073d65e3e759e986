"""Rankings by candidate source, for an evaluation that compares them (R-READ-3).

- `fts` — the lexical source alone: the production keyword extraction (OR of terms), FTS
  order, owner and scope applied before LIMIT, re-validated by the store. No scoring.
- `vector` — the vector source alone: the query embedded through the provider gateway, the
  vector store's scan under the agent's ready certificate, the production similarity
  threshold, every hit re-validated against the authoritative row (owner, scope, lifecycle,
  embedding identity), in similarity order.
- `lexical` — the whole retrieval with no embedder: what an FTS-only installation returns.
- `hybrid` — the whole retrieval with vectors, the product default.

The two retrieval modes use purpose INJECTION: the per-turn path, RECALL's candidates and
scores without access accounting, so one query cannot change the next one's ranking. A
`scoring` policy other than the settings' ranks with that policy instead. Agent scope only:
an evaluation's corpus has no sessions.
"""

from __future__ import annotations

from enum import StrEnum

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.scope import ScopeFilter, validate_agent_id
from memory_core.domain.validation import check_enum, check_int, check_text
from memory_core.services.memory.parts import MemoryParts
from memory_core.services.read.keywords import search_terms
from memory_core.services.read.retrieval.service import (
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalService,
)
from memory_core.services.read.scoring import ScoringPolicy

__all__ = ["MAX_DEPTH", "MemoryRankings", "RankSource", "Ranking"]

MAX_DEPTH = 100  # the retrieval service's top-K ceiling


class RankSource(StrEnum):
    FTS = "fts"
    VECTOR = "vector"
    LEXICAL = "lexical"
    HYBRID = "hybrid"

    @property
    def needs_embedder(self) -> bool:
        return self in (RankSource.VECTOR, RankSource.HYBRID)


@attrs.frozen(kw_only=True)
class Ranking:
    claim_ids: tuple[str, ...]  # best first
    degraded: bool = False  # the vector path failed for this query (counted, never hidden)


class MemoryRankings(MemoryParts):
    async def rank(
        self,
        agent_id: str,
        query: str,
        *,
        source: RankSource,
        depth: int,
        scoring: ScoringPolicy | None = None,
    ) -> Ranking:
        validate_agent_id(agent_id)
        query = check_text(query, "query", allow_blank=True)
        source = check_enum(source, RankSource, "source")
        depth = check_int(depth, "depth", minimum=1)
        if source is RankSource.FTS:
            return self._rank_fts(agent_id, query, depth)
        deadline = self._deadline(self.settings.embedding_pass_seconds)
        if source is RankSource.VECTOR:
            return await self._rank_vector(agent_id, query, depth, deadline)
        retrieval = RetrievalService(
            store=self.store,
            domain_clock=self._clock,
            infra_clock=self._infra,
            calls=self.retrieval.calls,
            index=self.index if source is RankSource.HYBRID else None,
            gateway=self.gateway if source is RankSource.HYBRID else None,
            settings=self.settings,
            scoring=scoring or ScoringPolicy.from_settings(self.settings),
            tokens=self.retrieval.tokens,
        )
        result = await retrieval.retrieve(
            RetrievalRequest(
                agent_id=agent_id,
                query=query,
                purpose=RetrievalPurpose.INJECTION,
                top_k=min(depth, MAX_DEPTH),
            ),
            deadline=deadline,
            cancel=CancellationToken(),
        )
        return Ranking(
            claim_ids=tuple(item.claim.id for item in result.items),
            degraded=bool(result.degradations),
        )

    def _rank_fts(self, agent_id: str, query: str, depth: int) -> Ranking:
        terms = search_terms(query)
        if not terms:
            return Ranking(claim_ids=())
        scope = ScopeFilter.agent_only()
        hits = self.store.search_fts(agent_id, terms, scope_filter=scope, limit=depth)
        claims = self.store.list_applicable_by_ids(
            agent_id, [hit.claim_id for hit in hits], scope_filter=scope
        )
        return Ranking(claim_ids=tuple(claim.id for claim in claims))

    async def _rank_vector(
        self, agent_id: str, query: str, depth: int, deadline: Deadline
    ) -> Ranking:
        vectors = self.index.vectors
        certificate = self.index.certificate(agent_id)
        if vectors is None or certificate is None or not query.strip():
            return Ranking(claim_ids=())
        cancel = CancellationToken()
        embedding = await self.gateway.embed_query(
            agent_id=agent_id, text=query, deadline=deadline, cancel=cancel, warm_recall=False
        )
        if embedding.vector is None:
            return Ranking(claim_ids=(), degraded=True)
        hits = await vectors.query(
            agent_id, certificate, embedding.vector, depth, deadline=deadline, cancel=cancel
        )
        threshold = self.settings.similarity_threshold
        kept = [hit.claim_id for hit in hits if hit.similarity >= threshold]
        claims = self.store.list_applicable_by_ids(
            agent_id, kept, scope_filter=ScopeFilter.agent_only(), embedding=certificate.identity
        )
        return Ranking(claim_ids=tuple(claim.id for claim in claims))
