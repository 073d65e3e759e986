"""Circuit breaker on warm-recall query embedding (R-PROV-2), on a manual clock — no sleeps."""

from __future__ import annotations

import asyncio

import pytest

from memory_contracts.fake_providers import FakeEmbeddingProvider, ScriptedTextProvider
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ProviderUnavailable
from memory_core.ports.providers import ChatMessage, TextRequest
from memory_core.services.providers.breaker import BreakerState, CircuitBreakers
from memory_core.services.providers.gateway.service import (
    ProviderGateway,
    QueryDegradation,
)
from memory_core.settings import MemorySettings

ID = "openai-compatible:bge-small"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def breakers(clock: ManualClock) -> CircuitBreakers:
    return CircuitBreakers(clock, MemorySettings())


def _fail(breakers: CircuitBreakers, agent: str = "a1", identity: str = ID) -> None:
    permit = breakers.acquire(agent, identity)
    assert permit is not None
    breakers.record_failure(permit)


def test_two_failures_within_thirty_seconds_open_the_breaker(breakers, clock) -> None:
    """R-PROV-2: 2 failures within 30 s open it; calls are skipped while open."""
    _fail(breakers)
    clock.advance(29.0)
    _fail(breakers)
    assert breakers.state("a1", ID) is BreakerState.OPEN
    assert breakers.acquire("a1", ID) is None


def test_failures_further_apart_than_the_window_do_not_open_it(breakers, clock) -> None:
    """R-PROV-2: the failures must fall within the short window."""
    _fail(breakers)
    clock.advance(31.0)
    _fail(breakers)
    assert breakers.state("a1", ID) is BreakerState.CLOSED
    assert breakers.acquire("a1", ID) is not None


def test_a_success_between_failures_resets_the_count(breakers) -> None:
    """R-PROV-2: only consecutive failures count."""
    _fail(breakers)
    permit = breakers.acquire("a1", ID)
    breakers.record_success(permit)
    _fail(breakers)
    assert breakers.state("a1", ID) is BreakerState.CLOSED


def test_after_the_cooldown_exactly_one_probe_runs_and_its_success_closes(breakers, clock):
    """R-PROV-2: skipped for 30 s, then one half-open probe (others skipped), success closes."""
    _fail(breakers)
    _fail(breakers)
    clock.advance(29.9)
    assert breakers.acquire("a1", ID) is None
    clock.advance(0.1)
    assert breakers.state("a1", ID) is BreakerState.HALF_OPEN
    probe = breakers.acquire("a1", ID)
    assert probe is not None and probe.probe
    assert breakers.acquire("a1", ID) is None  # concurrent call while probing: skipped
    breakers.record_success(probe)
    assert breakers.state("a1", ID) is BreakerState.CLOSED
    after = breakers.acquire("a1", ID)
    assert after is not None and not after.probe


def test_a_failed_probe_reopens_for_another_cooldown(breakers, clock) -> None:
    """R-PROV-2: probe failure re-opens for another 30 s."""
    _fail(breakers)
    _fail(breakers)
    clock.advance(30.0)
    breakers.record_failure(breakers.acquire("a1", ID))
    assert breakers.state("a1", ID) is BreakerState.OPEN
    clock.advance(29.0)
    assert breakers.acquire("a1", ID) is None
    clock.advance(1.0)
    assert breakers.acquire("a1", ID).probe


def test_a_released_probe_lets_the_next_call_probe(breakers, clock) -> None:
    """R-PROV-2: a cancelled probe only clears the probe flag; it is not a failure."""
    _fail(breakers)
    _fail(breakers)
    clock.advance(30.0)
    breakers.release(breakers.acquire("a1", ID))
    assert breakers.state("a1", ID) is BreakerState.HALF_OPEN
    assert breakers.acquire("a1", ID).probe


def test_a_released_permit_is_not_a_failure(breakers) -> None:
    """R-PROV-2: cancellation and capacity rejection are neutral."""
    for _ in range(5):
        breakers.release(breakers.acquire("a1", ID))
    assert breakers.state("a1", ID) is BreakerState.CLOSED


def test_identity_change_agent_cleanup_and_disposal_reset_it(breakers) -> None:
    """R-PROV-2: config change (new identity), agent cleanup and disposal reset the breaker;
    a permit issued before the reset changes nothing afterwards."""
    _fail(breakers)
    _fail(breakers)
    assert breakers.acquire("a1", "ollama:nomic") is not None  # new identity: fresh circuit
    assert breakers.state("a1", ID) is BreakerState.CLOSED

    stale = breakers.acquire("a2", ID)
    _fail(breakers, "a2")
    breakers.reset_agent("a2")
    breakers.record_failure(stale)
    assert breakers.state("a2", ID) is BreakerState.CLOSED

    _fail(breakers, "a3")
    _fail(breakers, "a3")
    breakers.reset_all()
    assert breakers.state("a3", ID) is BreakerState.CLOSED


def test_breakers_are_per_agent(breakers) -> None:
    """R-PROV-2: one agent's failing provider does not skip another agent's recall."""
    _fail(breakers, "a1")
    _fail(breakers, "a1")
    assert breakers.acquire("a2", ID) is not None


# --- through the gateway -----------------------------------------------------------------
def _query(gateway: ProviderGateway, clock: ManualClock, agent: str = "a1", cancel=None):
    return asyncio.run(
        gateway.embed_query(
            agent_id=agent,
            text="q",
            deadline=Deadline.after(clock, 10.0),
            cancel=cancel or CancellationToken(),
        )
    )


def test_gateway_skips_query_embedding_while_open_and_recovers_through_one_probe(clock):
    """R-PROV-2: after 2 provider failures the vector path is skipped without calling the
    provider (`embeddingCircuitOpen`); after 30 s the probe succeeds and closes it."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    fake.fail_next(ProviderUnavailable("down"), ProviderUnavailable("down"))
    assert _query(gateway, clock).degradation is QueryDegradation.ERROR
    assert _query(gateway, clock).degradation is QueryDegradation.ERROR
    calls = len(fake.calls)
    skipped = _query(gateway, clock)
    assert skipped.degradation is QueryDegradation.CIRCUIT_OPEN
    assert len(fake.calls) == calls  # the provider was not called
    clock.advance(30.0)
    assert _query(gateway, clock).ok
    assert _query(gateway, clock).ok
    assert gateway.diagnostics().total("circuitOpen") == 1


def test_gateway_counts_deadline_misses_as_breaker_failures(clock) -> None:
    """R-PROV-2: deadline misses are health failures."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())

    async def slow() -> None:
        clock.advance(5.0)

    fake.latency = slow
    assert _query(gateway, clock).degradation is QueryDegradation.TIMEOUT
    assert _query(gateway, clock).degradation is QueryDegradation.TIMEOUT
    assert _query(gateway, clock).degradation is QueryDegradation.CIRCUIT_OPEN


def test_gateway_cancellations_and_capacity_rejections_do_not_open_the_breaker(clock) -> None:
    """R-PROV-2: cancellation and local capacity rejection are not provider failures."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(
        clock=clock, embedder=fake, settings=MemorySettings(provider_calls_total=1)
    )
    for _ in range(3):
        token = CancellationToken()
        token.cancel()
        assert _query(gateway, clock, cancel=token).degradation is QueryDegradation.CANCELLED

    async def hold_one_slot_and_query():
        release = asyncio.Event()
        fake.latency = release.wait
        held = asyncio.ensure_future(
            gateway.embed_query(
                agent_id="other",
                text="q",
                deadline=Deadline.after(clock, 10.0),
                cancel=CancellationToken(),
            )
        )
        await asyncio.sleep(0)  # let it take the only slot
        rejected = [
            await gateway.embed_query(
                agent_id="a1",
                text="q",
                deadline=Deadline.after(clock, 10.0),
                cancel=CancellationToken(),
            )
            for _ in range(3)
        ]
        release.set()
        await held
        fake.latency = None
        return rejected

    rejected = asyncio.run(hold_one_slot_and_query())
    assert {r.reason for r in rejected} == {"capacity"}
    assert gateway.breakers.state("a1", "fake:hash-v1") is BreakerState.CLOSED
    assert _query(gateway, clock).ok


def test_gateway_breaker_does_not_apply_to_batch_warm_dimension_or_text(clock) -> None:
    """R-PROV-2: batch embedding, warm-up, dimension discovery and text generation neither
    trip the breaker nor are skipped by it."""
    fake = FakeEmbeddingProvider()
    text = ScriptedTextProvider(default="ok")
    gateway = ProviderGateway(clock=clock, embedder=fake, text=text, settings=MemorySettings())
    request = TextRequest(messages=[ChatMessage(role="user", content="hi")])

    async def run_all(fail_first: bool):
        deadline = Deadline.after(clock, 60.0)
        outcomes = []
        for index, call in enumerate(
            (
                lambda: gateway.embed_batch(
                    agent_id="a1", texts=["x"], deadline=deadline, cancel=CancellationToken()
                ),
                lambda: gateway.warm(agent_id="a1", deadline=deadline, cancel=CancellationToken()),
                lambda: gateway.complete(
                    agent_id="a1", request=request, deadline=deadline, cancel=CancellationToken()
                ),
            )
        ):
            if fail_first and index < 2:
                fake.fail_next(ProviderUnavailable("down"))
            elif fail_first:
                text.then(ProviderUnavailable("down"))
            try:
                outcomes.append(await call())
            except ProviderUnavailable:
                outcomes.append("failed")
        return outcomes

    assert asyncio.run(run_all(fail_first=True)) == ["failed"] * 3
    assert gateway.breakers.state("a1", "fake:hash-v1") is BreakerState.CLOSED
    fake.fail_next(ProviderUnavailable("down"), ProviderUnavailable("down"))
    _query(gateway, clock)
    _query(gateway, clock)
    assert gateway.breakers.state("a1", "fake:hash-v1") is BreakerState.OPEN
    outcomes = asyncio.run(run_all(fail_first=False))
    assert outcomes[2] == "ok" and outcomes[0].vectors and outcomes[1].dim == 16
    identity = asyncio.run(
        gateway.identity(
            agent_id="a1", deadline=Deadline.after(clock, 60), cancel=CancellationToken()
        )
    )
    assert identity.dim == 16


def test_gateway_reset_agent_closes_its_breaker(clock) -> None:
    """R-PROV-2: agent cleanup resets the breaker."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    fake.fail_next(ProviderUnavailable("down"), ProviderUnavailable("down"))
    _query(gateway, clock)
    _query(gateway, clock)
    gateway.reset_agent("a1")
    assert _query(gateway, clock).ok


def test_decision_recall_can_bypass_the_breaker(clock) -> None:
    """R-PROV-2: only warm-recall query embedding is guarded; `warm_recall=False` is not."""
    fake = FakeEmbeddingProvider()
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=MemorySettings())
    fake.fail_next(ProviderUnavailable("down"), ProviderUnavailable("down"))
    _query(gateway, clock)
    _query(gateway, clock)
    result = asyncio.run(
        gateway.embed_query(
            agent_id="a1",
            text="q",
            deadline=Deadline.after(clock, 10.0),
            cancel=CancellationToken(),
            warm_recall=False,
        )
    )
    assert result.ok
