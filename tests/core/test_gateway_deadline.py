"""Adaptive query-embedding deadline (R-PROV-1): EWMA × headroom, clamped, relaxed once."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_contracts.fake_providers import FakeEmbeddingProvider, clock_step
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ValidationError
from memory_core.services.providers.deadline import AdaptiveDeadlines
from memory_core.services.providers.gateway.service import ProviderGateway, QueryDegradation
from memory_core.settings import MemorySettings

KEY = ("openai-compatible", "bge-small")
SETTINGS = MemorySettings(latency_smoothing=0.25, latency_headroom=1.75)


def test_first_use_gets_the_floor() -> None:
    """R-PROV-1: with no latency sample yet the deadline is the 800 ms floor."""
    assert AdaptiveDeadlines(SETTINGS).begin_ms(KEY) == 800


def test_first_sample_initialises_and_later_samples_are_smoothed() -> None:
    """R-PROV-1: deadline = round(smoothed × headroom); the EWMA starts at the first sample."""
    deadlines = AdaptiveDeadlines(SETTINGS)
    deadlines.record_success(KEY, 1000.0)
    assert deadlines.profile(KEY).smoothed_ms == 1000.0
    assert deadlines.begin_ms(KEY) == 1750
    deadlines.record_success(KEY, 600.0)  # 1000 + (600 - 1000) × 0.25 = 900
    assert deadlines.profile(KEY).smoothed_ms == pytest.approx(900.0)
    assert deadlines.begin_ms(KEY) == 1575


def test_deadline_is_clamped_to_floor_and_ceiling() -> None:
    """R-PROV-1: the computed deadline never leaves [800 ms, 2 s]."""
    fast, slow = AdaptiveDeadlines(SETTINGS), AdaptiveDeadlines(SETTINGS)
    fast.record_success(KEY, 20.0)
    slow.record_success(KEY, 5_000.0)
    assert fast.begin_ms(KEY) == 800
    assert slow.begin_ms(KEY) == 2_000


def test_a_miss_relaxes_exactly_the_next_attempt_to_the_ceiling() -> None:
    """R-PROV-1: one miss widens the next attempt to 2 s; the one after is back to observed."""
    deadlines = AdaptiveDeadlines(SETTINGS)
    deadlines.record_success(KEY, 500.0)
    assert deadlines.begin_ms(KEY) == 875
    deadlines.record_miss(KEY)
    assert deadlines.begin_ms(KEY) == 2_000
    assert deadlines.begin_ms(KEY) == 875


def test_a_success_clears_a_pending_relax_and_returns_to_the_observed_value() -> None:
    """R-PROV-1: a success returns the deadline to the observed value."""
    deadlines = AdaptiveDeadlines(SETTINGS)
    deadlines.record_success(KEY, 500.0)
    deadlines.record_miss(KEY)
    deadlines.record_success(KEY, 500.0)
    assert deadlines.begin_ms(KEY) == 875


def test_profiles_are_per_provider_and_model() -> None:
    """R-PROV-1: the profile is keyed by provider/model; another model starts at the floor."""
    deadlines = AdaptiveDeadlines(SETTINGS)
    deadlines.record_success(KEY, 1_000.0)
    deadlines.record_miss(KEY)
    assert deadlines.begin_ms(("openai-compatible", "other-model")) == 800


def test_a_negative_or_nan_latency_is_refused() -> None:
    deadlines = AdaptiveDeadlines(SETTINGS)
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValidationError):
            deadlines.record_success(KEY, bad)


@given(
    st.lists(
        st.one_of(st.none(), st.floats(min_value=0, max_value=1e6, allow_nan=False)),
        max_size=40,
    )
)
def test_the_deadline_always_stays_within_the_clamp(events: list[float | None]) -> None:
    """R-PROV-1: whatever the history of successes (latency) and misses (None), the budget
    is within [floor, ceiling]."""
    deadlines = AdaptiveDeadlines(SETTINGS)
    for event in events:
        if event is None:
            deadlines.record_miss(KEY)
        else:
            deadlines.record_success(KEY, event)
        assert 800 <= deadlines.begin_ms(KEY) <= 2_000


# --- through the gateway, on a manual clock ---------------------------------------------
def _query(gateway: ProviderGateway, clock: ManualClock):
    return asyncio.run(
        gateway.embed_query(
            agent_id="a1",
            text="where do I live?",
            deadline=Deadline.after(clock, 10.0),
            cancel=CancellationToken(),
        )
    )


def test_gateway_query_deadline_tracks_observed_latency_and_relaxes_once_after_a_miss() -> None:
    """R-PROV-1: the gateway hands the provider the adaptive budget; a call slower than it is
    `embeddingTimeout`; the next attempt gets 2 s; a success returns to the observed value."""
    clock = ManualClock()
    fake = FakeEmbeddingProvider(latency=clock_step(clock, 0.6))
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=SETTINGS)

    first = _query(gateway, clock)  # floor 800 ms, took 600 ms
    assert (first.ok, first.deadline_ms, first.elapsed_ms) == (True, 800, pytest.approx(600.0))
    assert _query(gateway, clock).deadline_ms == 1050  # 600 × 1.75

    fake.latency = clock_step(clock, 1.3)  # slower than 1050 ms
    missed = _query(gateway, clock)
    assert missed.degradation is QueryDegradation.TIMEOUT
    assert missed.reason == "deadline"

    relaxed = _query(gateway, clock)  # 2 s this once: 1.3 s fits
    assert (relaxed.ok, relaxed.deadline_ms) == (True, 2_000)
    # Back to the observed value: EWMA 600 + (1300 - 600) × 0.25 = 775 -> × 1.75 = 1356.
    assert _query(gateway, clock).deadline_ms == 1356


def test_warm_up_latency_feeds_the_query_deadline() -> None:
    """R-PROV-1: successful warm calls update the same latency profile as queries."""
    clock = ManualClock()
    fake = FakeEmbeddingProvider(latency=clock_step(clock, 1.0))
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=SETTINGS)
    asyncio.run(
        gateway.warm(agent_id="a1", deadline=Deadline.after(clock, 60), cancel=CancellationToken())
    )
    fake.latency = None
    assert _query(gateway, clock).deadline_ms == 1750


def test_a_timeout_caused_by_the_callers_shorter_deadline_does_not_relax() -> None:
    """R-PROV-1: only a miss of the gateway's own budget relaxes the next attempt; the turn's
    own deadline running out first is still reported as `embeddingTimeout`."""
    clock = ManualClock()
    fake = FakeEmbeddingProvider(latency=clock_step(clock, 0.5))
    gateway = ProviderGateway(clock=clock, embedder=fake, settings=SETTINGS)
    result = asyncio.run(
        gateway.embed_query(
            agent_id="a1",
            text="q",
            deadline=Deadline.after(clock, 0.3),
            cancel=CancellationToken(),
        )
    )
    assert result.degradation is QueryDegradation.TIMEOUT
    assert gateway.deadlines.peek_ms((fake.provider_id, fake.model_id)) == 800
