"""The retrieval service: owner+scope candidates from FTS and vectors, re-validated, ranked.

One call per purpose (R-READ-3/4/8, R-DIR-2, R-TIME-3):

1. keywords from the query; the scope filter from the caller's context (missing context never
   widens); active, specific `suppress_topic` directives for recall/injection;
2. FTS candidates with the owner and scope predicates applied before LIMIT, and vector
   candidates from the agent's namespace under a ready certificate, with one query
   embedding reused across refills;
3. every candidate re-validated against the authoritative row (owner, scope, lifecycle,
   supersession, and — for vector hits — the embedding identity) before it can rank;
4. suppression before access accounting, temporal eligibility in `current` mode;
5. geometric refill (×growth, ≤cap per source) while fewer than top-K survive, recording
   `candidateBudgetExhausted` at the cap; then scoring, fusion and near-duplicate collapse.

Degradations are recorded, never raised: a turn without vectors still gets FTS results.
Diagnostics carry timings and counts only — never query or claim text.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.errors import (
    ClearInProgress,
    DeadlineExceeded,
    IdentityMismatch,
    OperationCancelled,
    StoreError,
    StoreQuarantined,
)
from memory_core.domain.manifest import Degradation, DroppedItem, StageTimings
from memory_core.domain.provenance import query_hash
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.temporal_policy import TemporalMode
from memory_core.domain.temporal_query import query_periods
from memory_core.ports.blocking import BlockingCalls
from memory_core.ports.claims import (
    ClaimSearch,
    ClearStatus,
    DirectiveReader,
    MatchMode,
)
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.vectors import ReadyCertificate, VectorHit, VectorStoreCold
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.read.claim_tokens import ClaimTokenCache
from memory_core.services.read.fusion import Candidate, candidates_from_lists
from memory_core.services.read.keywords import bounded_query, search_terms
from memory_core.services.read.lexical_rank import lexical_ranks
from memory_core.services.read.retrieval.failures import QUERY_DEGRADATIONS, store_failure
from memory_core.services.read.retrieval.rounds import Source, elapsed_ms, grow, read_round
from memory_core.services.read.retrieval.types import (
    RetrievalDiagnostics,
    RetrievalOutcome,
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalResult,
)
from memory_core.services.read.scoring import (
    ScoredItem,
    ScoringPolicy,
    TurnVerdicts,
    filter_suppressed,
    rank_candidates,
)
from memory_core.services.vectors.index import VectorIndex
from memory_core.settings import MemorySettings

__all__ = [
    "RetrievalDiagnostics",
    "RetrievalOutcome",
    "RetrievalPurpose",
    "RetrievalRequest",
    "RetrievalResult",
    "RetrievalService",
    "RetrievalStore",
    "fenced_by_clear",
]

log = logging.getLogger(__name__)


@runtime_checkable
class RetrievalStore(ClaimSearch, DirectiveReader, ClearStatus, Protocol):
    """The roles recall reads through: search and re-validation, the active directives,
    and which agents a clear fences (to say why nothing came back)."""


def fenced_by_clear(store: ClearStatus, agent_id: str) -> bool:
    """Whether a clear job fences `agent_id` now: recall then answers FENCED (R-FORGET-3)."""
    return any(job.agent_id == agent_id for job in store.pending_clears())


class RetrievalService:
    def __init__(
        self,
        *,
        store: RetrievalStore,
        domain_clock: DomainClock,
        infra_clock: InfraClock,
        calls: BlockingCalls,
        index: VectorIndex | None = None,
        gateway: ProviderGateway | None = None,
        settings: MemorySettings,
        scoring: ScoringPolicy | None = None,  # None: ScoringPolicy.from_settings(settings)
        tokens: ClaimTokenCache | None = None,  # None: a cache of this service's own
    ) -> None:
        self._store = store
        self._clock = domain_clock
        self._infra = infra_clock
        # Every store call goes through it, under the caller's deadline: off the loop when
        # the store waits on a network (R-READ-1).
        self.calls = calls
        self._index = index
        self._gateway = gateway
        self._settings = settings
        self._scoring = scoring or ScoringPolicy.from_settings(self._settings)
        # Shared across queries (and with rankings built on this service): a candidate's
        # tokens are computed once per revision, not once per query.
        self.tokens = ClaimTokenCache() if tokens is None else tokens

    async def retrieve(
        self, request: RetrievalRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> RetrievalResult:
        started = self._infra.monotonic()
        timings: dict[str, float] = {}
        degradations: set[Degradation] = set()
        counts = {"fts": 0, "vector": 0, "revalidated": 0, "suppressed": 0, "refills": 0}
        agent = request.agent_id
        purpose = request.purpose
        top_k = request.top_k or self._settings.top_k
        # Every later step (hash, keywords, coverage, embedding truncation) sees only this
        # bounded prefix, so a 10 MB paste costs what a short message does (R-READ-1).
        query = bounded_query(request.query, self._settings.query_prefix_code_points)
        hashed = query_hash(agent, query)

        def finish(
            outcome: RetrievalOutcome,
            items: Sequence[ScoredItem] = (),
            dropped: Sequence[DroppedItem] = (),
            reserve: Sequence[ScoredItem] = (),
        ) -> RetrievalResult:
            ordered = tuple(member for member in Degradation if member in degradations)
            timings["total"] = self._elapsed_ms(started)
            diagnostics = RetrievalDiagnostics(
                purpose=purpose,
                outcome=outcome,
                timings=StageTimings(**timings),
                fts_candidates=counts["fts"],
                vector_candidates=counts["vector"],
                revalidated=counts["revalidated"],
                suppressed=counts["suppressed"],
                refills=counts["refills"],
                degradations=ordered,
            )
            return RetrievalResult(
                items=tuple(items),
                reserve=tuple(reserve),
                dropped=tuple(dropped),
                degradations=ordered,
                query_hash=hashed,
                diagnostics=diagnostics,
            )

        stage = self._infra.monotonic()
        terms = search_terms(query)
        timings["keywords"] = self._elapsed_ms(stage)
        if not query:
            return finish(RetrievalOutcome.EMPTY_QUERY)
        scope_filter = request.scope_filter or ScopeFilter.from_context(request.context)

        def fence_and_topics() -> tuple[bool, list[Directive]]:
            fenced = request.fenced
            if fenced is None:
                fenced = fenced_by_clear(self._store, agent)
            if fenced:
                return True, []
            if not purpose.suppresses:
                return False, []
            active = request.directives
            if active is None:
                active = tuple(self._store.list_directives(agent, status=DirectiveStatus.ACTIVE))
            return False, [d for d in active if d.kind is DirectiveKind.SUPPRESS_TOPIC]

        if request.fenced is not None and request.directives is not None:
            fenced, directives = fence_and_topics()  # the caller read both: no hop
        else:
            try:
                # One blocking hop for both (each hop is a loop turn, or a thread round trip).
                fenced, directives = await self.calls.run(
                    fence_and_topics, deadline=deadline, cancel=cancel
                )
            except (ClearInProgress, OperationCancelled, DeadlineExceeded, StoreError) as exc:
                return finish(store_failure(exc, agent, degradations))
        if fenced:
            # The store would answer with nothing anyway; say why (R-FORGET-3).
            return finish(RetrievalOutcome.FENCED)

        periods = query_periods(query, reference=self._clock.now(), timezone=self._clock.timezone())
        # Candidate depth: 2×top-K per source after filtering; deeper when filters will bite,
        # and when a named period will promote rows the words alone rank low.
        deep = purpose.mode is TemporalMode.CURRENT or bool(directives) or bool(periods)
        candidate_limit = top_k * (4 if deep else 2)
        cap = self._settings.candidate_cap_per_source
        fts = Source(limit=min(candidate_limit, cap))
        vec = Source(limit=min(self._settings.vector_initial_limit, candidate_limit * 2, cap))
        query_vector = await self._query_vector(
            agent,
            query,
            purpose=purpose,
            degradations=degradations,
            timings=timings,
            deadline=deadline,
            cancel=cancel,
        )
        certificate = self._index.certificate(agent) if self._index else None
        match_mode = MatchMode.ALL if purpose is RetrievalPurpose.SEARCH else MatchMode.ANY
        now = self._clock.now()
        # One temporal verdict per candidate, shared by the refill count and the ranking.
        verdicts = TurnVerdicts(now=now, mode=purpose.mode, policy=self._scoring.temporal)
        kept: tuple[Candidate, ...] = ()
        suppressed: tuple[DroppedItem, ...] = ()
        while True:
            try:
                cancel.raise_if_cancelled()
                hits = await self._vector_hits(
                    agent,
                    vector=query_vector,
                    certificate=certificate,
                    source=vec,
                    degradations=degradations,
                    timings=timings,
                    deadline=deadline,
                    cancel=cancel,
                )
                if hits is None:  # the vector path just failed: continue on FTS alone
                    query_vector, hits = None, []
                # One blocking hop per round for the search and both re-validations (each
                # hop is a loop turn, or a thread round trip).
                found = await self.calls.run(
                    functools.partial(
                        read_round,
                        self._store,
                        self._infra,
                        agent,
                        terms,
                        scope_filter=scope_filter,
                        fts_limit=fts.limit,
                        match_mode=match_mode,
                        vector_ids=[hit.claim_id for hit in hits],
                        identity=certificate.identity if certificate is not None else None,
                    ),
                    deadline=deadline,
                    cancel=cancel,
                )
            except (ClearInProgress, OperationCancelled, DeadlineExceeded, StoreError) as exc:
                return finish(store_failure(exc, agent, degradations))
            timings["revalidation"] = timings.get("revalidation", 0.0) + found.revalidation_ms
            fts.returned = len(found.fts_hits)
            fts.saturated = len(found.fts_hits) >= fts.limit
            fts_claims: list[Claim] = []
            fts_ranks: dict[str, int] = {}
            coverage: dict[str, float] = {}
            if found.fts_claims:
                scores = {hit.claim_id: hit.rank for hit in found.fts_hits}
                lexical = lexical_ranks(query, found.fts_claims, scores, tokens=self.tokens)
                fts_claims, fts_ranks, coverage = lexical.claims, lexical.ranks, lexical.coverage
            similarity = {hit.claim_id: hit.similarity for hit in hits}
            vector_claims = [(claim, similarity[claim.id]) for claim in found.vector_claims]
            counts["revalidated"] = len(fts_claims) + len(vector_claims)
            candidates = candidates_from_lists(
                fts_claims, vector_claims, fts_ranks=fts_ranks, coverage=coverage
            )
            if directives:
                kept, suppressed = filter_suppressed(candidates, directives)
            else:
                kept, suppressed = candidates, ()
            counts["suppressed"] = len(suppressed)
            eligible = sum(1 for candidate in kept if verdicts.eligible(candidate.claim))
            if eligible >= top_k or not grow(
                (fts, vec) if query_vector is not None else (fts,),
                cap=cap,
                growth=self._settings.refill_growth,
                degradations=degradations,
            ):
                break
            counts["refills"] += 1
        counts["fts"], counts["vector"] = fts.returned, vec.returned

        stage = self._infra.monotonic()
        ranking = rank_candidates(
            kept,
            now=now,
            policy=self._scoring,
            mode=purpose.mode,
            top_k=top_k + request.reserve,
            tokens=self.tokens,
            periods=periods,
            verdicts=verdicts,
        )
        items, reserve = ranking.items[:top_k], ranking.items[top_k:]
        timings["assembly"] = self._elapsed_ms(stage)
        if purpose is RetrievalPurpose.RECALL and items:
            # Only what the caller actually receives is counted, after suppression (R-DIR-2).
            ids = [i.claim.id for i in items]
            try:
                await self.calls.run(
                    lambda: self._store.record_access(agent, ids, now=now),
                    deadline=deadline,
                    cancel=cancel,
                )
            except (StoreError, DeadlineExceeded, OperationCancelled) as exc:
                # The caller still gets what was ranked; only the count is lost.
                log.warning("access accounting skipped for agent %s: %s", agent, type(exc).__name__)
        return finish(RetrievalOutcome.COMPLETED, items, (*suppressed, *ranking.dropped), reserve)

    # --- sources ------------------------------------------------------------------------
    async def _query_vector(
        self,
        agent: str,
        query: str,
        *,
        purpose: RetrievalPurpose,
        degradations: set[Degradation],
        timings: dict[str, float],
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> tuple[float, ...] | None:
        if self._index is None or self._gateway is None or not self._index.enabled:
            return None
        if self._index.certificate(agent) is None:
            degradations.add(Degradation.VECTOR_COLD)
            self._index.request_warm(agent)
            return None
        stage = self._infra.monotonic()
        embedding = await self._gateway.embed_query(
            agent_id=agent,
            text=query,
            deadline=deadline,
            cancel=cancel,
            warm_recall=purpose in (RetrievalPurpose.RECALL, RetrievalPurpose.INJECTION),
        )
        timings["query_embedding"] = self._elapsed_ms(stage)
        if embedding.vector is None:
            degradations.add(QUERY_DEGRADATIONS.get(embedding.degradation, Degradation.UNKNOWN))
            return None
        return embedding.vector

    async def _vector_hits(
        self,
        agent: str,
        *,
        vector: tuple[float, ...] | None,
        certificate: ReadyCertificate | None,
        source: Source,
        degradations: set[Degradation],
        timings: dict[str, float],
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> list[VectorHit] | None:
        """The scan's hits at or above the similarity threshold, not yet re-validated; None
        when the vector path failed."""
        if vector is None or self._index is None or self._index.vectors is None:
            return []
        if certificate is None:
            degradations.add(Degradation.VECTOR_COLD)
            return None
        stage = self._infra.monotonic()
        try:
            hits: Sequence[VectorHit] = await self._index.vectors.query(
                agent,
                certificate,
                vector,
                source.limit,
                deadline=deadline,
                cancel=cancel,
            )
        except OperationCancelled:
            raise
        except VectorStoreCold:
            degradations.add(Degradation.VECTOR_COLD)
            return None
        except IdentityMismatch:
            degradations.add(Degradation.REVISION_CHANGED)
            self._index.invalidate(agent)
            return None
        except StoreQuarantined:
            degradations.add(Degradation.STORE_UNUSABLE)
            return None
        except DeadlineExceeded:
            degradations.add(Degradation.STORE_TIMEOUT)
            return None
        except StoreError:
            degradations.add(Degradation.STORE_ERROR)
            return None
        finally:
            timings["vector"] = timings.get("vector", 0.0) + self._elapsed_ms(stage)
        threshold = self._settings.similarity_threshold
        kept = [hit for hit in hits if hit.similarity >= threshold]
        source.returned = len(hits)
        # A list cut by the threshold is complete: a deeper scan would only add weaker hits.
        source.saturated = len(hits) >= source.limit and len(kept) == len(hits)
        return kept

    def _elapsed_ms(self, since: float) -> float:
        return elapsed_ms(self._infra, since)
