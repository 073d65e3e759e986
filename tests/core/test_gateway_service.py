"""ProviderGateway: deadlines per purpose, capacity, truncation, batching, abort (R-PROV-*)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import pytest

from memory_contracts.fake_providers import STALL, FakeEmbeddingProvider, ScriptedTextProvider
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    CapacityRejected,
    OperationCancelled,
    ProviderResponseError,
    ProviderUnavailable,
    ValidationError,
)
from memory_core.ports.providers import ChatMessage, EmbeddingPurpose, TextRequest
from memory_core.services.providers.gateway.service import (
    ProviderGateway,
    QueryDegradation,
    TextPurpose,
)
from memory_core.settings import MemorySettings

REQUEST = TextRequest(messages=[ChatMessage(role="user", content="extract")])


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def _token() -> CancellationToken:
    return CancellationToken()


class SpyEmbedder:
    """Returns what it is told to and records the deadline each call was handed."""

    def __init__(self, clock: ManualClock, answer=None, dim: int = 3) -> None:
        self.clock = clock
        self.answer = answer
        self.dim = dim
        self.remaining: list[tuple[str, float]] = []

    provider_id = "spy"
    model_id = "spy-1"

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        self.remaining.append(("dimension", deadline.remaining()))
        return self.dim

    async def embed(self, texts: Sequence[str], *, purpose, deadline, cancel):
        self.remaining.append((str(purpose), deadline.remaining()))
        if self.answer is not None:
            return self.answer(texts)
        return [[1.0] * self.dim for _ in texts]

    async def aclose(self) -> None:
        return None


# --- R-ARCH-6: no call without a deadline ------------------------------------------------
@pytest.mark.parametrize("method", ["embed_query", "embed_batch", "warm", "identity", "complete"])
def test_the_gateway_refuses_a_call_without_a_deadline(clock, method) -> None:
    """R-ARCH-6: a provider call is never made without a deadline; the gateway refuses it
    (a missing argument is a TypeError, a None deadline a ValidationError) before any
    provider is touched."""
    fake = FakeEmbeddingProvider()
    text = ScriptedTextProvider(default="x")
    gateway = ProviderGateway(clock=clock, embedder=fake, text=text, settings=MemorySettings())
    extra = {
        "embed_query": {"text": "q"},
        "embed_batch": {"texts": ["q"]},
        "complete": {"request": REQUEST},
    }.get(method, {})
    call = getattr(gateway, method)
    with pytest.raises(TypeError):
        asyncio.run(call(agent_id="a1", cancel=_token(), **extra))
    with pytest.raises(ValidationError, match="deadline"):
        asyncio.run(call(agent_id="a1", deadline=None, cancel=_token(), **extra))
    with pytest.raises(ValidationError, match="cancel"):
        asyncio.run(call(agent_id="a1", deadline=Deadline.after(clock, 5), cancel=None, **extra))
    assert fake.calls == [] and text.requests == []


# --- R-READ-2: truncation -----------------------------------------------------------------
def test_query_embedding_sends_only_the_first_2000_code_points(clock) -> None:
    """R-READ-2: code points, not bytes or UTF-16 units: astral characters count as one."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    text = "😀" * 1_500 + "界" * 1_000
    result = asyncio.run(
        gateway.embed_query(
            agent_id="a1", text=text, deadline=Deadline.after(clock, 5), cancel=_token()
        )
    )
    (sent,) = fake.calls[0].texts
    assert sent == "😀" * 1_500 + "界" * 500
    assert result.truncated and result.vector == fake.vector(sent)
    short = asyncio.run(
        gateway.embed_query(
            agent_id="a1", text="short", deadline=Deadline.after(clock, 5), cancel=_token()
        )
    )
    assert not short.truncated and fake.calls[1].texts == ("short",)


def test_a_blank_query_is_a_validation_error(clock) -> None:
    gateway = ProviderGateway(
        clock=clock, embedder=FakeEmbeddingProvider(), settings=MemorySettings()
    )
    with pytest.raises(ValidationError, match="text"):
        asyncio.run(
            gateway.embed_query(
                agent_id="a1", text="  ", deadline=Deadline.after(clock, 5), cancel=_token()
            )
        )


# --- per-purpose deadlines ---------------------------------------------------------------
def test_each_purpose_gets_its_own_deadline_cut_short_by_the_callers(clock) -> None:
    """R-PROV-1 and reference §5.1: query adaptive (800 ms first), dimension 15 s, batch and
    warm 30 s, text 60 s; a caller's earlier deadline always wins."""
    spy = SpyEmbedder(clock)
    text_remaining: list[float] = []

    class SpyText(ScriptedTextProvider):
        async def complete(self, request, *, deadline, cancel):
            text_remaining.append(deadline.remaining())
            return "done"

    gateway = ProviderGateway(clock=clock, embedder=spy, text=SpyText(), settings=MemorySettings())
    far = Deadline.after(clock, 1_000)

    async def every_purpose(deadline: Deadline) -> None:
        # Dimension first: any later embedding would teach the gateway the dimension.
        await gateway.identity(agent_id="a", deadline=deadline, cancel=_token())
        await gateway.embed_query(agent_id="a", text="q", deadline=deadline, cancel=_token())
        await gateway.embed_batch(agent_id="a", texts=["x"], deadline=deadline, cancel=_token())
        await gateway.warm(agent_id="a", deadline=deadline, cancel=_token())
        await gateway.complete(agent_id="a", request=REQUEST, deadline=deadline, cancel=_token())

    asyncio.run(every_purpose(far))
    assert spy.remaining == [
        ("dimension", pytest.approx(15.0)),
        ("query-embedding", pytest.approx(0.8)),
        ("embedding-batch", pytest.approx(30.0)),
        ("embedding-warm", pytest.approx(30.0)),
    ]
    assert text_remaining == [pytest.approx(60.0)]

    spy.remaining.clear()
    gateway = ProviderGateway(clock=clock, embedder=spy, text=SpyText(), settings=MemorySettings())
    asyncio.run(every_purpose(Deadline.after(clock, 0.5)))
    assert [remaining for _, remaining in spy.remaining] == [pytest.approx(0.5)] * 4
    assert text_remaining[-1] == pytest.approx(0.5)


def test_purpose_timeouts_follow_the_settings(clock) -> None:
    spy = SpyEmbedder(clock)
    gateway = ProviderGateway(
        clock=clock, embedder=spy, settings=MemorySettings(embedding_batch_seconds=5.0)
    )
    asyncio.run(
        gateway.embed_batch(
            agent_id="a", texts=["x"], deadline=Deadline.after(clock, 100), cancel=_token()
        )
    )
    assert spy.remaining == [("embedding-batch", 5.0)]


def test_an_already_expired_deadline_never_reaches_the_provider(clock) -> None:
    """R-ARCH-6: an expired deadline is refused like a missing one would be."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    expired = Deadline.after(clock, 0)
    result = asyncio.run(
        gateway.embed_query(agent_id="a", text="q", deadline=expired, cancel=_token())
    )
    assert result.degradation is QueryDegradation.TIMEOUT
    assert fake.calls == []


# --- capacity ------------------------------------------------------------------------------
def test_capacity_is_two_per_agent_provider_model_purpose_and_released_on_settle(clock):
    """Reference §5.1: ≤2 unsettled calls per (agent, provider, model, purpose) key; a third
    is CapacityRejected; other agents and purposes are separate keys; settling frees a slot."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())

    async def scenario():
        release = asyncio.Event()
        fake.latency = release.wait

        def batch(agent: str):
            return asyncio.ensure_future(
                gateway.embed_batch(
                    agent_id=agent,
                    texts=["x"],
                    deadline=Deadline.after(clock, 30),
                    cancel=_token(),
                )
            )

        held = [batch("a1"), batch("a1")]
        await asyncio.sleep(0)
        assert gateway.diagnostics().in_flight == 2
        with pytest.raises(CapacityRejected):
            await gateway.embed_batch(
                agent_id="a1", texts=["x"], deadline=Deadline.after(clock, 30), cancel=_token()
            )
        other_agent = batch("a2")
        other_purpose = asyncio.ensure_future(
            gateway.warm(agent_id="a1", deadline=Deadline.after(clock, 30), cancel=_token())
        )
        await asyncio.sleep(0)
        assert gateway.diagnostics().in_flight == 4
        release.set()
        await asyncio.gather(*held, other_agent, other_purpose)
        assert gateway.diagnostics().in_flight == 0
        fake.latency = None
        return await gateway.embed_batch(
            agent_id="a1", texts=["x"], deadline=Deadline.after(clock, 30), cancel=_token()
        )

    assert asyncio.run(scenario()).vectors == (fake.vector("x"),)
    assert gateway.diagnostics().total("capacityRejected") == 1


def test_the_global_capacity_limit_applies_across_agents(clock) -> None:
    """Reference §5.1: a global limit (64 by default) bounds all calls together."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(
        clock=clock, embedder=fake, settings=MemorySettings(provider_calls_total=3)
    )

    async def scenario():
        release = asyncio.Event()
        fake.latency = release.wait
        held = [
            asyncio.ensure_future(
                gateway.embed_batch(
                    agent_id=f"a{i}",
                    texts=["x"],
                    deadline=Deadline.after(clock, 30),
                    cancel=_token(),
                )
            )
            for i in range(3)
        ]
        await asyncio.sleep(0)
        try:
            with pytest.raises(CapacityRejected):
                await gateway.embed_batch(
                    agent_id="a9",
                    texts=["x"],
                    deadline=Deadline.after(clock, 30),
                    cancel=_token(),
                )
        finally:
            release.set()
            await asyncio.gather(*held)

    asyncio.run(scenario())


# --- cancellation --------------------------------------------------------------------------
def test_abort_agent_cancels_only_that_agents_calls_in_flight(clock) -> None:
    """R-PROV-3: abort_agent reaches the provider's token for that agent's calls only."""
    fake = FakeEmbeddingProvider()
    text = ScriptedTextProvider([STALL, "other agent's answer"])
    gateway = ProviderGateway(clock=clock, embedder=fake, text=text, settings=MemorySettings())

    async def scenario():
        release = asyncio.Event()
        fake.latency = release.wait
        query = asyncio.ensure_future(
            gateway.embed_query(
                agent_id="a1", text="q", deadline=Deadline.after(clock, 30), cancel=_token()
            )
        )
        completion = asyncio.ensure_future(
            gateway.complete(
                agent_id="a1",
                request=REQUEST,
                deadline=Deadline.after(clock, 30),
                cancel=_token(),
            )
        )
        other = asyncio.ensure_future(
            gateway.embed_batch(
                agent_id="a2", texts=["x"], deadline=Deadline.after(clock, 30), cancel=_token()
            )
        )
        await asyncio.sleep(0)
        assert gateway.abort_agent("a1") == 2
        query_result = await query
        with pytest.raises(OperationCancelled):
            await completion
        assert not other.done()
        release.set()
        return query_result, await other

    query_result, other_result = asyncio.run(scenario())
    assert query_result.degradation is QueryDegradation.CANCELLED
    assert other_result.vectors == (fake.vector("x"),)
    assert gateway.diagnostics().in_flight == 0


def test_the_callers_token_reaches_the_provider(clock) -> None:
    """R-PROV-3: cancelling the caller's token cancels the provider call."""
    text = ScriptedTextProvider([STALL])
    gateway = ProviderGateway(clock=clock, text=text, settings=MemorySettings())

    async def scenario():
        token = _token()
        call = asyncio.ensure_future(
            gateway.complete(
                agent_id="a1", request=REQUEST, deadline=Deadline.after(clock, 30), cancel=token
            )
        )
        await asyncio.sleep(0)
        token.cancel("user stopped")
        with pytest.raises(OperationCancelled):
            await call

    asyncio.run(scenario())


def test_a_late_result_after_abort_is_absorbed(clock) -> None:
    """R-PROV-3: a provider that ignores its token cannot deliver a result after the abort."""

    class Deaf:
        provider_id, model_id = "deaf", "deaf-1"

        def __init__(self) -> None:
            self.release = asyncio.Event()

        async def complete(self, request, *, deadline, cancel):
            await self.release.wait()
            return "too late"

        async def aclose(self) -> None:
            return None

    async def scenario():
        deaf = Deaf()
        gateway = ProviderGateway(clock=clock, text=deaf, settings=MemorySettings())
        call = asyncio.ensure_future(
            gateway.complete(
                agent_id="a1",
                request=REQUEST,
                deadline=Deadline.after(clock, 30),
                cancel=_token(),
            )
        )
        await asyncio.sleep(0)
        gateway.abort_agent("a1")
        deaf.release.set()
        with pytest.raises(OperationCancelled):
            await call
        return gateway.diagnostics()

    diagnostics = asyncio.run(scenario())
    assert diagnostics.counts[("lateAbsorbed", "extraction")] == 1
    assert diagnostics.counts[("cancelled", "extraction")] == 1


def test_dispose_aborts_everything_and_aclose_closes_the_providers(clock) -> None:
    fake = FakeEmbeddingProvider()
    text = ScriptedTextProvider([STALL])
    gateway = ProviderGateway(clock=clock, embedder=fake, text=text, settings=MemorySettings())

    async def scenario():
        call = asyncio.ensure_future(
            gateway.complete(
                agent_id="a1",
                request=REQUEST,
                deadline=Deadline.after(clock, 30),
                cancel=_token(),
            )
        )
        await asyncio.sleep(0)
        await gateway.aclose()
        with pytest.raises(OperationCancelled):
            await call

    asyncio.run(scenario())
    assert fake.closed and text.closed


# --- query outcomes --------------------------------------------------------------------------
def test_query_failures_become_degradation_codes_not_exceptions(clock) -> None:
    """R-PROV-1, R-PROV-2: the read path gets a code — timeout, error, cancelled."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())

    def query(token=None):
        return asyncio.run(
            gateway.embed_query(
                agent_id="a1",
                text="q",
                deadline=Deadline.after(clock, 5),
                cancel=token or _token(),
            )
        )

    fake.fail_next(ProviderUnavailable("connection refused"))
    unavailable = query()
    assert (unavailable.degradation, unavailable.reason) == (QueryDegradation.ERROR, "unavailable")
    gateway.reset_agent("a1")
    fake.fail_next(ProviderResponseError("HTTP 400"))
    assert query().reason == "response"
    cancelled = _token()
    cancelled.cancel()
    assert query(cancelled).degradation is QueryDegradation.CANCELLED
    ok = query()
    assert ok.ok and ok.degradation is None
    assert ok.identity.fingerprint == "fake:hash-v1" and ok.identity.dim == 16


def test_no_embedder_configured_degrades_the_query_and_raises_elsewhere(clock) -> None:
    gateway = ProviderGateway(clock=clock, settings=MemorySettings())
    result = asyncio.run(
        gateway.embed_query(
            agent_id="a1", text="q", deadline=Deadline.after(clock, 5), cancel=_token()
        )
    )
    assert (result.degradation, result.reason) == (QueryDegradation.ERROR, "unconfigured")
    with pytest.raises(ProviderUnavailable):
        asyncio.run(
            gateway.embed_batch(
                agent_id="a1", texts=["x"], deadline=Deadline.after(clock, 5), cancel=_token()
            )
        )
    with pytest.raises(ProviderUnavailable):
        asyncio.run(
            gateway.complete(
                agent_id="a1",
                request=REQUEST,
                deadline=Deadline.after(clock, 5),
                cancel=_token(),
            )
        )


# --- batching and validation -----------------------------------------------------------------
def test_batch_embedding_is_split_into_requests_of_fifty_in_order(clock) -> None:
    """Reference §5.2: 50 texts per request; vectors come back in input order."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    texts = [f"claim {i}" for i in range(120)]
    batch = asyncio.run(
        gateway.embed_batch(
            agent_id="a1", texts=texts, deadline=Deadline.after(clock, 60), cancel=_token()
        )
    )
    assert [len(call.texts) for call in fake.calls] == [50, 50, 20]
    assert {call.purpose for call in fake.calls} == {EmbeddingPurpose.BATCH}
    assert batch.vectors == tuple(fake.vector(text) for text in texts)
    assert batch.identity.dim == 16


def test_batch_requests_take_texts_of_like_length_together(clock) -> None:
    """Issue 15: a request pads to its longest text, so the requests take the texts shortest
    first (stable among equals); the vectors still come back in input order."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(
        clock=clock, embedder=fake, settings=MemorySettings(embedding_batch_size=3)
    )
    texts = ["a long sentence here", "tiny", "mid size", "x", "also tiny", "yy", "mid text"]
    batch = asyncio.run(
        gateway.embed_batch(
            agent_id="a1", texts=texts, deadline=Deadline.after(clock, 60), cancel=_token()
        )
    )
    assert [list(call.texts) for call in fake.calls] == [
        ["x", "yy", "tiny"],
        ["mid size", "mid text", "also tiny"],
        ["a long sentence here"],
    ]
    assert batch.vectors == tuple(fake.vector(text) for text in texts)


def test_blank_batch_texts_are_refused_before_any_request(clock) -> None:
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    with pytest.raises(ValidationError, match=r"texts\[1\]"):
        asyncio.run(
            gateway.embed_batch(
                agent_id="a1",
                texts=["ok", ""],
                deadline=Deadline.after(clock, 5),
                cancel=_token(),
            )
        )
    assert fake.calls == []


def _second_is(bad: object) -> object:
    """An answer whose second vector is `bad` and whose others are good."""
    return lambda texts: [bad if n == 1 else [1.0, 2.0, 3.0] for n in range(len(texts))]


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        (lambda texts: [[1.0, 2.0, 3.0]] * (len(texts) + 1), "expected 3 vector(s)"),
        (_second_is([1.0, math.nan, 3.0]), "vector 1 holds a non-finite value"),
        (_second_is([1.0, math.inf, -math.inf]), "vector 1 holds a non-finite value"),
        (_second_is([1.0, 2.0]), "vector 1 of 3 has dimension 2 instead of 3"),
        (_second_is([]), "vector 1 is empty"),
        (_second_is(["a", "b", "c"]), "vector 1 holds a non-number"),
        (_second_is(7), "vector 1 is not a sequence of numbers"),
    ],
    ids=["count", "nan", "infinities", "dimension", "empty", "non-number", "scalar"],
)
def test_a_bad_provider_answer_is_a_provider_response_error_naming_the_vector(
    clock, answer, named
) -> None:
    """R-PROV-4: a vector of the wrong count, shape, dimension or value never passes the
    gateway; the typed error names the vector by position (never by its values), the
    dimension checked before the values."""
    spy = SpyEmbedder(clock)
    gateway = ProviderGateway(clock=clock, embedder=spy, settings=MemorySettings())
    good = asyncio.run(
        gateway.embed_batch(
            agent_id="a", texts=["x"], deadline=Deadline.after(clock, 5), cancel=_token()
        )
    )
    assert good.identity.dim == 3
    spy.answer = answer
    with pytest.raises(ProviderResponseError) as caught:
        asyncio.run(
            gateway.embed_batch(
                agent_id="a",
                texts=["x", "y", "z"],
                deadline=Deadline.after(clock, 5),
                cancel=_token(),
            )
        )
    assert named in str(caught.value)


def test_finite_values_pass_even_when_their_sum_overflows(clock) -> None:
    """R-PROV-4: the fast finiteness test (the sum) only ever sends a vector to the exact
    one; finite values as large as a float can hold are still finite."""
    big = [1.5e308, 1.5e308, -1.0]
    spy = SpyEmbedder(clock, answer=lambda texts: [big for _ in texts])
    gateway = ProviderGateway(clock=clock, embedder=spy, settings=MemorySettings())
    batch = asyncio.run(
        gateway.embed_batch(
            agent_id="a", texts=["x", "y"], deadline=Deadline.after(clock, 5), cancel=_token()
        )
    )
    assert batch.vectors == (tuple(big), tuple(big))


def test_dimension_discovery_is_cached_per_identity(clock) -> None:
    fake = FakeEmbeddingProvider(dim=24)
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())

    async def twice():
        first = await gateway.identity(
            agent_id="a", deadline=Deadline.after(clock, 5), cancel=_token()
        )
        second = await gateway.identity(
            agent_id="b", deadline=Deadline.after(clock, 5), cancel=_token()
        )
        return first, second

    first, second = asyncio.run(twice())
    assert first == second and first.dim == 24
    assert sum(call.purpose is None for call in fake.calls) == 1


def test_a_foreign_exception_from_a_provider_is_typed_and_says_nothing_more(clock) -> None:
    """R-PROV-5: a third-party provider's raw exception (which may quote a URL or key) is
    turned into ProviderResponseError naming only its type."""

    class Leaky(ScriptedTextProvider):
        async def complete(self, request, *, deadline, cancel):
            raise RuntimeError("GET https://api.example/v1?key=sk-live-abcdefghijkl failed")

    gateway = ProviderGateway(clock=clock, text=Leaky(), settings=MemorySettings())
    with pytest.raises(ProviderResponseError) as caught:
        asyncio.run(
            gateway.complete(
                agent_id="a", request=REQUEST, deadline=Deadline.after(clock, 5), cancel=_token()
            )
        )
    assert "RuntimeError" in str(caught.value)
    assert "sk-live" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_diagnostics_are_counts_and_latencies_only(clock) -> None:
    """R-PRIV-1/R-FORGET-1: diagnostics hold no query text, only counts and timings."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    secret_query = "my bank PIN is 4921"
    asyncio.run(
        gateway.embed_query(
            agent_id="a", text=secret_query, deadline=Deadline.after(clock, 5), cancel=_token()
        )
    )
    diagnostics = gateway.diagnostics()
    assert diagnostics.counts == {("admitted", "query-embedding"): 1}
    assert [sample.outcome for sample in diagnostics.latencies] == ["ok"]
    assert "4921" not in repr(diagnostics)


def test_text_completion_passes_the_request_and_purpose(clock) -> None:
    text = ScriptedTextProvider(["answer"])
    gateway = ProviderGateway(clock=clock, text=text, settings=MemorySettings())
    result = asyncio.run(
        gateway.complete(
            agent_id="a",
            request=REQUEST,
            deadline=Deadline.after(clock, 5),
            cancel=_token(),
            purpose=TextPurpose.DECISION,
        )
    )
    assert result == "answer" and text.requests == [REQUEST]
    assert gateway.diagnostics().counts == {("admitted", "decision"): 1}


def test_a_bound_text_provider_routes_port_calls_through_the_gateway(clock) -> None:
    """R-PROV-3: code written against the TextProvider port (the LLM extractor) still gets
    the gateway's deadline cap, capacity accounting and abort_agent."""
    from memory_core.ports.providers import TextProvider

    text = ScriptedTextProvider(["first", STALL])
    gateway = ProviderGateway(clock=clock, text=text, settings=MemorySettings())
    bound = gateway.text_provider_for("a1", TextPurpose.DECISION)
    assert isinstance(bound, TextProvider)
    assert (bound.provider_id, bound.model_id) == ("scripted", "script-v1")

    async def scenario():
        deadline = Deadline.after(clock, 500)
        first = await bound.complete(REQUEST, deadline=deadline, cancel=_token())
        stalled = asyncio.ensure_future(bound.complete(REQUEST, deadline=deadline, cancel=_token()))
        await asyncio.sleep(0)
        assert gateway.abort_agent("a1") == 1
        with pytest.raises(OperationCancelled):
            await stalled
        await bound.aclose()
        return first

    assert asyncio.run(scenario()) == "first"
    assert not text.closed  # the gateway owns the provider
    assert gateway.diagnostics().counts[("admitted", "decision")] == 2
    with pytest.raises(ProviderUnavailable):
        ProviderGateway(clock=clock, settings=MemorySettings()).text_provider_for("a1")


def test_diagnostics_serialise_to_plain_json_types(clock) -> None:
    import json

    gateway = ProviderGateway(
        clock=clock, embedder=FakeEmbeddingProvider(), settings=MemorySettings()
    )
    asyncio.run(
        gateway.embed_query(
            agent_id="a", text="q", deadline=Deadline.after(clock, 5), cancel=_token()
        )
    )
    payload = json.loads(json.dumps(gateway.diagnostics().to_dict()))
    assert payload["counts"] == {"admitted": {"query-embedding": 1}}
    assert payload["inFlight"] == 0
    assert payload["latencies"][0]["outcome"] == "ok"


class ShortVectorEmbedder(FakeEmbeddingProvider):
    """Answers one text with a vector one value short; the others as the fake does."""

    POISON = "the provider answers this one with a short vector"

    async def embed(self, texts: Sequence[str], *, purpose, deadline, cancel):
        vectors = await super().embed(texts, purpose=purpose, deadline=deadline, cancel=cancel)
        return [
            v[:-1] if text == self.POISON else v for text, v in zip(texts, vectors, strict=True)
        ]


def test_a_vector_of_the_wrong_dimension_is_refused_alone_and_the_rest_are_stored() -> None:
    """R-PROV-4, R-WRITE-6: a batch whose answer holds one vector of the wrong dimension is
    refused as a whole (typed, naming the vector); the drain halves it until that text stands
    alone, marks it ERROR and stores every other vector."""
    from memory_contracts.fake_claim_store import InMemoryClaimStore
    from memory_contracts.fake_vector_store import InMemoryVectorStore
    from memory_core.domain.claims import ClaimDraft, EmbeddingState, WriteOrigin
    from memory_core.services.vectors.index import VectorIndex

    clock = ManualClock()
    store = InMemoryClaimStore(clock=clock)
    vectors = InMemoryVectorStore()
    embedder = ShortVectorEmbedder()
    gateway = ProviderGateway(
        clock=clock, embedder=embedder, settings=MemorySettings(embedding_batch_size=4)
    )
    index = VectorIndex(store=store, vectors=vectors, gateway=gateway, domain_clock=clock)
    texts = [f"the user keeps fact number {n}" for n in range(11)]
    texts[6] = ShortVectorEmbedder.POISON
    outcomes = store.insert_many(
        [ClaimDraft(agent_id="a", kind="semantic", content=text) for text in texts],
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    ids = [outcome.claim.id for outcome in outcomes if outcome.claim is not None]
    # The poison is the longest of its four texts, so its request asks for it last.
    with pytest.raises(ProviderResponseError, match="vector 3 of 4 has dimension 15 instead"):
        asyncio.run(
            gateway.embed_batch(
                agent_id="a",
                texts=texts[4:8],
                deadline=Deadline.after(clock, 5),
                cancel=_token(),
            )
        )
    report = asyncio.run(index.drain("a", deadline=Deadline.after(clock, 30), cancel=_token()))
    assert (report.embedded, report.rejected, report.failed) == (10, 1, False)
    states = {claim.id: claim.embedding_state for claim in store.list_claims("a", limit=100)}
    assert [states[i] for i in ids] == [EmbeddingState.READY] * 6 + [EmbeddingState.ERROR] + [
        EmbeddingState.READY
    ] * 4
    assert store.list_pending_embeddings("a", limit=100) == []


# --- issue 15: a batch's next request in the air while the current one is answered ---------
class PacedEmbedder:
    """Answers each request after a few loop turns, counting the requests in the air; the
    first `fail_first` requests fail as refusals."""

    provider_id = "paced"
    model_id = "paced-1"

    def __init__(self, *, fail_first: int = 0, slow: int | None = None) -> None:
        self.slow = slow  # this request (counted from 1) takes ten times as long
        self.flying = 0
        self.most = 0
        self.started: list[list[str]] = []
        self.cancelled = 0
        self.fail_first = fail_first

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        return 2

    async def embed(self, texts: Sequence[str], *, purpose, deadline, cancel):
        self.started.append(list(texts))
        failing = len(self.started) <= self.fail_first
        self.flying += 1
        self.most = max(self.most, self.flying)
        try:
            for _ in range(50 if len(self.started) == self.slow else 5):
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.flying -= 1
        if failing:
            raise ProviderResponseError("refused")
        return [[float(len(text)), 1.0] for text in texts]

    async def aclose(self) -> None:
        return None


def _paced_gateway(clock, embedder, *, scheduled: bool, per_key: int = 2) -> ProviderGateway:
    from memory_adapters.asyncio_scheduler import AsyncioScheduler

    settings = MemorySettings(embedding_batch_size=2, provider_calls_per_key=per_key)
    scheduler = AsyncioScheduler() if scheduled else None
    return ProviderGateway(clock=clock, embedder=embedder, settings=settings, scheduler=scheduler)


@pytest.mark.parametrize(
    ("scheduled", "per_key", "most"),
    [(True, 2, 2), (True, 1, 1), (False, 2, 1)],
    ids=["ahead", "no-room-for-two", "no-scheduler"],
)
def test_a_batch_sends_its_next_request_while_the_current_one_is_answered(
    clock, scheduled: bool, per_key: int, most: int
) -> None:
    """Issue 15: with a scheduler and room for two calls of the key, the next request is in
    the air beside the current one (never more); the vectors come back in the texts' order
    either way, and no request is refused for capacity."""
    embedder = PacedEmbedder()
    gateway = _paced_gateway(clock, embedder, scheduled=scheduled, per_key=per_key)
    texts = ["ccc", "a", "eeeee", "bb", "dddd"]
    batch = asyncio.run(
        gateway.embed_batch(
            agent_id="a", texts=texts, deadline=Deadline.after(clock, 30), cancel=_token()
        )
    )
    assert [vector[0] for vector in batch.vectors] == [float(len(text)) for text in texts]
    assert embedder.most == most
    assert len(embedder.started) == 3 and embedder.flying == 0


def test_a_failed_request_takes_the_one_sent_ahead_down_with_it(clock) -> None:
    """Issue 15, R-PROV-3: the batch is all or nothing: when the current request fails, the one sent
    ahead is cancelled, the batch raises the failure, and no request stays in the air."""
    embedder = PacedEmbedder(fail_first=1)
    gateway = _paced_gateway(clock, embedder, scheduled=True)

    async def scenario() -> None:
        with pytest.raises(ProviderResponseError):
            await gateway.embed_batch(
                agent_id="a",
                texts=["one", "two", "three", "four", "five"],
                deadline=Deadline.after(clock, 30),
                cancel=_token(),
            )
        for _ in range(20):
            await asyncio.sleep(0)
        assert embedder.flying == 0
        assert embedder.cancelled == 1  # the second request, sent ahead
        assert len(embedder.started) == 2  # the third was never sent

    asyncio.run(scenario())


@pytest.mark.parametrize("sent", [2, 3], ids=["first-inline", "both-sent-ahead"])
def test_a_cancelled_batch_leaves_no_request_in_the_air(clock, sent: int) -> None:
    """Issue 15, R-PROV-3: cancelling the batch while its current request and the one sent ahead are
    out cancels both — the current one awaited inline, or itself sent ahead earlier."""
    embedder = PacedEmbedder(slow=2)
    gateway = _paced_gateway(clock, embedder, scheduled=True)

    async def scenario() -> None:
        batch = asyncio.ensure_future(
            gateway.embed_batch(
                agent_id="a",
                texts=["one", "two", "three", "four", "five", "six"],
                deadline=Deadline.after(clock, 30),
                cancel=_token(),
            )
        )
        while len(embedder.started) < sent:
            await asyncio.sleep(0)
        assert embedder.flying == 2
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch
        for _ in range(20):
            await asyncio.sleep(0)
        assert embedder.flying == 0 and embedder.cancelled == 2
        assert len(embedder.started) == sent

    asyncio.run(scenario())
