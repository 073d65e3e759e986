"""The provider gateway: every embedding and text call the services make goes through here.

It owns what one provider call must not decide for itself: a deadline per purpose (the
query embedding's adapts to observed latency, R-PROV-1), local capacity (at most 2 calls in
flight per agent/provider/model/purpose and 64 in all), the circuit breaker on warm-recall
query embedding (R-PROV-2), query truncation to 2,000 code points (R-READ-2), batching,
dimension discovery, and aborting one agent's calls (R-PROV-3). A call without a `Deadline`
is refused (R-ARCH-6).

Pure: it awaits the provider ports and never touches asyncio. Enforcement of the deadline
and the token happens in the adapters (and in the composition root's guard around every
provider), so here a deadline is a value handed down and a token is linked per call.
Capacity is released when the awaited provider call settles.

`embed_query` is for the read path and never raises for an expected failure: it returns a
`QueryEmbedding` whose `degradation` names what went wrong. The other methods raise the
typed `ProviderError`s, `DeadlineExceeded` or `OperationCancelled`.

Given a scheduler, `embed_batch` keeps the batch's next request in the air while the provider
answers the current one, so what a request costs before the model runs (a local model's
tokenizer, a network round trip) overlaps the request before it (issue 15). It sends ahead
only while the key's capacity leaves room for both requests, so a batch never meets a
`CapacityRejected` of its own making; batch calls of one agent do not overlap anyway (the
vector index's agent locks serialise them).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Sequence

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import (
    CapacityRejected,
    DeadlineExceeded,
    OperationCancelled,
    ProviderError,
    ProviderResponseError,
    ProviderUnavailable,
    ValidationError,
)
from memory_core.ports.clock import InfraClock
from memory_core.ports.providers import (
    EmbeddingProvider,
    EmbeddingPurpose,
    TextProvider,
    TextRequest,
)
from memory_core.ports.scheduler import TaskScheduler
from memory_core.services.providers.breaker import BreakerPermit, CircuitBreakers
from memory_core.services.providers.deadline import AdaptiveDeadlines
from memory_core.services.providers.gateway.ahead import Ahead
from memory_core.services.providers.gateway.answers import Vectors, checked_vectors
from memory_core.services.providers.gateway.bound import BoundTextProvider
from memory_core.services.providers.gateway.calls import ProviderCalls, require_call_args
from memory_core.services.providers.gateway.types import (
    CapacityLimits,
    EmbeddedBatch,
    GatewayDiagnostics,
    LatencySample,
    PurposeTimeouts,
    QueryDegradation,
    QueryEmbedding,
    TextPurpose,
)
from memory_core.settings import MemorySettings

__all__ = [
    "CapacityLimits",
    "EmbeddedBatch",
    "GatewayDiagnostics",
    "LatencySample",
    "ProviderGateway",
    "PurposeTimeouts",
    "QueryDegradation",
    "QueryEmbedding",
    "TextPurpose",
]

WARMUP_TEXT = "memory warmup"


class ProviderGateway:
    """One per process (or per configuration); shared by every agent's read and write paths."""

    def __init__(
        self,
        *,
        clock: InfraClock,
        embedder: EmbeddingProvider | None = None,
        text: TextProvider | None = None,
        settings: MemorySettings,
        scheduler: TaskScheduler | None = None,
    ) -> None:
        self._clock = clock
        self._scheduler = scheduler  # sends a batch's next request ahead (module docstring)
        self._embedder = embedder
        self._text = text
        self._timeouts = PurposeTimeouts.from_settings(settings)
        self._max_query_code_points = settings.query_max_code_points
        self._batch_size = settings.embedding_batch_size
        self.deadlines = AdaptiveDeadlines(settings)
        self.breakers = CircuitBreakers(clock, settings)
        self._dims: dict[tuple[str, str], int] = {}
        self._identities: dict[tuple[str, str, int], EmbeddingIdentity] = {}
        self._calls = ProviderCalls(
            clock, CapacityLimits.from_settings(settings), settings.latency_samples
        )

    @property
    def embedding_configured(self) -> bool:
        """An embedder is configured; without one the read path is FTS-only by design."""
        return self._embedder is not None

    # --- read path ---------------------------------------------------------------------
    async def embed_query(
        self,
        *,
        agent_id: str,
        text: str,
        deadline: Deadline,
        cancel: CancellationToken,
        warm_recall: bool = True,
    ) -> QueryEmbedding:
        """The query vector under the adaptive deadline, or a degradation (never raises for
        provider trouble). `deadline` is the caller's (e.g. the turn's); the earlier wins.
        `warm_recall=False` bypasses the breaker (decision retrieval, evaluations)."""
        require_call_args(deadline, cancel)
        query = text[: self._max_query_code_points]
        if not query.strip():
            raise ValidationError("text", "must not be blank")
        started = self._clock.monotonic()
        result = functools.partial(
            QueryEmbedding, vector=None, identity=None, truncated=len(query) < len(text)
        )

        def degraded(kind: QueryDegradation, reason: str, budget: int = 0) -> QueryEmbedding:
            elapsed = 1000.0 * (self._clock.monotonic() - started)
            return result(degradation=kind, reason=reason, deadline_ms=budget, elapsed_ms=elapsed)

        embedder = self._embedder
        if embedder is None:
            return degraded(QueryDegradation.ERROR, "unconfigured")
        if cancel.cancelled:
            self._calls.count("cancelled", EmbeddingPurpose.QUERY)
            return degraded(QueryDegradation.CANCELLED, "cancelled")
        key = (embedder.provider_id, embedder.model_id)
        permit: BreakerPermit | None = None
        if warm_recall:
            permit = self.breakers.acquire(agent_id, f"{key[0]}:{key[1]}")
            if permit is None:
                self._calls.count("circuitOpen", EmbeddingPurpose.QUERY)
                return degraded(QueryDegradation.CIRCUIT_OPEN, "circuitOpen")
        budget = self.deadlines.begin_ms(key)
        own = Deadline.after(self._clock, budget / 1000.0)
        # Only a miss of the gateway's own budget says something about the provider; the
        # caller's shorter deadline running out does not relax the budget or trip the breaker.
        own_binds = own.expires_at <= deadline.expires_at
        try:
            (vector,) = await self._embed(
                [query],
                agent_id=agent_id,
                purpose=EmbeddingPurpose.QUERY,
                deadline=own.earliest(deadline),
                cancel=cancel,
            )
        except CapacityRejected:
            self._release(permit)
            return degraded(QueryDegradation.ERROR, "capacity", budget)
        except OperationCancelled:
            self._release(permit)
            return degraded(QueryDegradation.CANCELLED, "cancelled", budget)
        except DeadlineExceeded:
            if own_binds:
                self.deadlines.record_miss(key)
                self._fail(permit)
            else:
                self._release(permit)
            return degraded(QueryDegradation.TIMEOUT, "deadline", budget)
        except ProviderError as exc:
            self._fail(permit)
            reason = "unavailable" if isinstance(exc, ProviderUnavailable) else "response"
            return degraded(QueryDegradation.ERROR, reason, budget)
        except BaseException:
            self._release(permit)  # the caller's task was cancelled: a probe must not stay stuck
            raise
        elapsed = 1000.0 * (self._clock.monotonic() - started)
        self.deadlines.record_success(key, elapsed)
        if permit is not None:
            self.breakers.record_success(permit)
        return result(
            vector=vector,
            identity=self._identity(embedder, len(vector)),
            deadline_ms=budget,
            elapsed_ms=elapsed,
        )

    # --- write path and background -----------------------------------------------------
    async def embed_batch(
        self, *, agent_id: str, texts: Sequence[str], deadline: Deadline, cancel: CancellationToken
    ) -> EmbeddedBatch:
        """Vectors for `texts` in order, `embedding_batch_size` per request, all or nothing.

        Each request gets the batch deadline (30 s), cut short by the caller's. No breaker.
        The requests take the texts shortest first: a model pads every text of a request to
        its longest, so texts of like length side by side waste the least compute (issue 15:
        3-4 % of MiniLM's time on a drain batch of mixed sentences). Length in characters
        stands for length in tokens, which only the provider knows.
        """
        require_call_args(deadline, cancel)
        embedder = self._require_embedder()
        for index, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                raise ValidationError(f"texts[{index}]", "must be a non-blank string")
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        requests = [
            order[start : start + self._batch_size]
            for start in range(0, len(order), self._batch_size)
        ]

        def request(indexes: list[int]) -> Awaitable[Vectors]:
            return self._embed(
                [texts[index] for index in indexes],
                agent_id=agent_id,
                purpose=EmbeddingPurpose.BATCH,
                cancel=cancel,
                deadline=self._within(self._timeouts.batch_seconds, deadline),
            )

        vectors: list[tuple[float, ...]] = [()] * len(texts)
        current: Ahead | None = None
        ahead: Ahead | None = None
        try:
            for position, indexes in enumerate(requests):
                current, ahead = ahead, None
                if position + 1 < len(requests) and self._sends_ahead(
                    agent_id, embedder, flying=current is not None
                ):
                    assert self._scheduler is not None
                    ahead = Ahead.send(
                        self._scheduler, functools.partial(request, requests[position + 1])
                    )
                answered = await (request(indexes) if current is None else current.answered())
                current = None
                for index, vector in zip(indexes, answered, strict=True):
                    vectors[index] = vector
        finally:
            # The batch failed or was cancelled: no request of it stays in the air.
            for unanswered in (current, ahead):
                if unanswered is not None:
                    unanswered.cancel()
        if not vectors:
            identity = await self.identity(agent_id=agent_id, deadline=deadline, cancel=cancel)
            return EmbeddedBatch(identity=identity, vectors=())
        return EmbeddedBatch(
            identity=self._identity(embedder, len(vectors[0])), vectors=tuple(vectors)
        )

    async def warm(
        self, *, agent_id: str, deadline: Deadline, cancel: CancellationToken
    ) -> EmbeddingIdentity:
        """Embed a fixed text to wake the model; its latency feeds the query deadline."""
        require_call_args(deadline, cancel)
        embedder = self._require_embedder()
        started = self._clock.monotonic()
        (vector,) = await self._embed(
            [WARMUP_TEXT],
            agent_id=agent_id,
            purpose=EmbeddingPurpose.WARM,
            cancel=cancel,
            deadline=self._within(self._timeouts.warm_seconds, deadline),
        )
        elapsed = 1000.0 * (self._clock.monotonic() - started)
        self.deadlines.record_success((embedder.provider_id, embedder.model_id), elapsed)
        return self._identity(embedder, len(vector))

    def latency_measured(self, identity: EmbeddingIdentity) -> bool:
        """Whether query embeddings of `identity`'s provider and model have a latency sample
        (what `warm` feeds the query deadline)."""
        return self.deadlines.profile((identity.provider, identity.model)).samples > 0

    async def identity(
        self, *, agent_id: str, deadline: Deadline, cancel: CancellationToken
    ) -> EmbeddingIdentity:
        """The embedder's (provider, model, dimension); the dimension is asked once and cached."""
        require_call_args(deadline, cancel)
        embedder = self._require_embedder()
        key = (embedder.provider_id, embedder.model_id)
        if key not in self._dims:
            dim = await self._calls.invoke(
                lambda d, t: embedder.dimensions(deadline=d, cancel=t),
                agent_id=agent_id,
                provider=embedder,
                purpose=EmbeddingPurpose.DIMENSION,
                deadline=self._within(self._timeouts.dimension_seconds, deadline),
                cancel=cancel,
            )
            if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
                raise ProviderResponseError("the provider reported an invalid dimension")
            self._dims.setdefault(key, dim)
        return self._identity(embedder, self._dims[key])

    async def complete(
        self,
        *,
        agent_id: str,
        request: TextRequest,
        deadline: Deadline,
        cancel: CancellationToken,
        purpose: TextPurpose = TextPurpose.EXTRACTION,
    ) -> str:
        """One completion under the text deadline (60 s) cut short by the caller's. No breaker."""
        require_call_args(deadline, cancel)
        provider = self._text
        if provider is None:
            raise ProviderUnavailable("no text provider is configured")
        result = await self._calls.invoke(
            lambda d, t: provider.complete(request, deadline=d, cancel=t),
            agent_id=agent_id,
            provider=provider,
            purpose=TextPurpose(purpose),
            deadline=self._within(self._timeouts.text_seconds, deadline),
            cancel=cancel,
        )
        if not isinstance(result, str):
            raise ProviderResponseError("the text provider returned a non-string")
        return result

    def text_provider_for(
        self, agent_id: str, purpose: TextPurpose = TextPurpose.EXTRACTION
    ) -> BoundTextProvider:
        """A `TextProvider` view for code written against the port (the LLM extractor), so
        its calls still get this gateway's deadline cap, capacity and `abort_agent`."""
        if self._text is None:
            raise ProviderUnavailable("no text provider is configured")
        return BoundTextProvider(self, self._text, agent_id, TextPurpose(purpose))

    # --- lifecycle ---------------------------------------------------------------------
    def abort_agent(self, agent_id: str, reason: str = "agent aborted") -> int:
        """Cancel the agent's calls in flight (clear, delete, reconfiguration); how many."""
        return self._calls.abort_agent(agent_id, reason)

    def reset_agent(self, agent_id: str) -> None:
        """Agent cleanup: abort its calls and forget its breaker."""
        self.abort_agent(agent_id, "agent cleanup")
        self.breakers.reset_agent(agent_id)

    def dispose(self) -> None:
        """Abort everything and forget all breaker and latency state."""
        for agent_id in self._calls.agents():
            self.abort_agent(agent_id, "gateway disposed")
        self.breakers.reset_all()
        self.deadlines.forget()

    async def aclose(self) -> None:
        """`dispose`, then close the providers' connections."""
        self.dispose()
        for provider in (self._embedder, self._text):
            if provider is not None:
                await provider.aclose()

    def diagnostics(self) -> GatewayDiagnostics:
        return self._calls.diagnostics()

    # --- embedding calls ---------------------------------------------------------------
    async def _embed(
        self,
        texts: list[str],
        *,
        agent_id: str,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Vectors:
        embedder = self._require_embedder()
        key = (embedder.provider_id, embedder.model_id)
        raw = await self._calls.invoke(
            lambda d, t: embedder.embed(texts, purpose=purpose, deadline=d, cancel=t),
            agent_id=agent_id,
            provider=embedder,
            purpose=purpose,
            deadline=deadline,
            cancel=cancel,
        )
        vectors = checked_vectors(raw, len(texts), self._dims.get(key))
        # The first answer fixes the dimension; a later different one is an error, never a
        # silent mix of vector spaces (R-PROV-4).
        self._dims.setdefault(key, len(vectors[0]))
        return vectors

    def _sends_ahead(self, agent_id: str, embedder: EmbeddingProvider, *, flying: bool) -> bool:
        """Room for the next request beside the current one (in the air already, or about
        to start inline)."""
        if self._scheduler is None:
            return False
        needed = 1 if flying else 2
        return self._calls.room(agent_id, embedder, EmbeddingPurpose.BATCH) >= needed

    def _within(self, seconds: float, deadline: Deadline) -> Deadline:
        return Deadline.after(self._clock, seconds).earliest(deadline)

    def _require_embedder(self) -> EmbeddingProvider:
        if self._embedder is None:
            raise ProviderUnavailable("no embedding provider is configured")
        return self._embedder

    def _identity(self, embedder: EmbeddingProvider, dim: int) -> EmbeddingIdentity:
        # A frozen value, built (and validated) once per vector space rather than per query.
        key = (embedder.provider_id, embedder.model_id, dim)
        identity = self._identities.get(key)
        if identity is None:
            identity = self._identities[key] = EmbeddingIdentity(
                provider=key[0], model=key[1], dim=dim
            )
        return identity

    def _fail(self, permit: BreakerPermit | None) -> None:
        if permit is not None:
            self.breakers.record_failure(permit)

    def _release(self, permit: BreakerPermit | None) -> None:
        if permit is not None:
            self.breakers.release(permit)
