"""The llm extractor path through the ingestion runtime (R-WRITE-6, R-WRITE-8, §7.3)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from ingestion_support import AGENT, Harness, make_harness

from memory_adapters.extractors import LLMExtractor
from memory_contracts.fake_providers import STALL, ScriptedTextProvider, clock_step
from memory_core.services.write.ingestion.service import (
    IngestionOutcome,
    TurnOutcome,
    TurnStatus,
)

ANSWER = json.dumps(
    {"memories": [{"category": "user_preference", "content": "The user prefers tea."}]}
)


@pytest.fixture
def provider() -> ScriptedTextProvider:
    return ScriptedTextProvider(default=ANSWER)


@pytest.fixture
def harness(tmp_path: Path, provider: ScriptedTextProvider) -> Iterator[Harness]:
    built = make_harness(
        tmp_path,
        extractor=LLMExtractor(provider),
        extraction_seconds=30,
    )
    yield built
    built.close()


def test_slow_provider_past_its_deadline_does_not_advance_the_cursor(
    harness: Harness, provider: ScriptedTextProvider
) -> None:
    """R-WRITE-6, R-WRITE-8: the completion takes 45 s of a 30 s budget: the pass ends
    DEADLINE_EXCEEDED, nothing is stored, the cursor stays; once the provider is fast
    again the same range is extracted and committed."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        provider.latency = clock_step(harness.clock, 45)
        report = await harness.turn(runtime, "I prefer tea.")
        assert report.outcome is IngestionOutcome.DEADLINE_EXCEEDED
        assert report.error == "DeadlineExceeded"
        assert harness.cursors.get(AGENT, "s1") == 0 and harness.claims() == []
        assert len(provider.requests) == 1

        provider.latency = None
        again = await harness.settle(runtime)
        assert again.outcome is IngestionOutcome.COMPLETED
        assert [claim.content for claim in harness.claims()] == ["The user prefers tea."]
        assert harness.cursors.get(AGENT, "s1") == 2

    asyncio.run(scenario())


def test_closing_the_session_cancels_a_stalled_completion(
    harness: Harness, provider: ScriptedTextProvider
) -> None:
    """R-PROV-3, R-WRITE-6: cancellation reaches the text provider; the pass ends with an
    explicit stale outcome instead of hanging until the provider's deadline."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        provider.then(STALL)
        harness.say("s1", "I prefer tea.")
        handle = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        assert handle is not None
        for _ in range(100):  # let the pass reach the provider (no time passes)
            if provider.requests:
                break
            await asyncio.sleep(0)
        assert provider.requests and not handle.done
        assert runtime.close() is handle
        await handle.wait()
        assert runtime.last_report is not None
        assert runtime.last_report.outcome is IngestionOutcome.STALE_EPOCH
        assert runtime.last_report.error == "OperationCancelled"
        assert harness.claims() == [] and harness.cursors.get(AGENT, "s1") == 0

    asyncio.run(scenario())


def test_unusable_extraction_fails_the_pass_without_moving_the_cursor(
    harness: Harness, provider: ScriptedTextProvider
) -> None:
    """§7.3: a response with no usable JSON raises, and the cursor does not advance."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        provider.then("I'm sorry, I can't help with that.")
        report = await harness.turn(runtime, "I prefer tea.")
        assert report.outcome is IngestionOutcome.FAILED
        assert report.error == "ProviderResponseError"
        assert harness.cursors.get(AGENT, "s1") == 0 and harness.claims() == []

    asyncio.run(scenario())
