"""Background extraction against fences, epochs and the reply path (R-WRITE-1, R-WRITE-6)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from ingestion_support import AGENT, GatedExtractor, Harness, make_harness

from memory_adapters.extractors import RulesExtractor
from memory_core.services.write.ingestion.service import IngestionOutcome, TurnOutcome, TurnStatus


@pytest.fixture
def gated() -> GatedExtractor:
    return GatedExtractor(RulesExtractor())


@pytest.fixture
def harness(tmp_path: Path, gated: GatedExtractor) -> Iterator[Harness]:
    built = make_harness(tmp_path, extractor=gated)
    yield built
    built.close()


def test_after_turn_settled_returns_while_extraction_is_still_pending(
    harness: Harness, gated: GatedExtractor
) -> None:
    """R-WRITE-1: the call returns at once; extraction runs later and is still waiting at the
    test's gate after the call has returned; only opening the gate lets it commit."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        harness.say("s1", "I live in Paris.")
        handle = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        assert handle is not None and not handle.done
        assert not gated.entered.is_set()  # not a single step of extraction ran in the call

        await gated.entered.wait()
        assert not handle.done
        assert harness.claims() == [] and harness.cursors.get(AGENT, "s1") == 0

        gated.gate.set()
        await handle.wait()
        assert runtime.last_report is not None
        assert runtime.last_report.outcome is IngestionOutcome.COMPLETED
        assert [claim.content for claim in harness.claims()] == ["The user lives in Paris."]
        assert harness.cursors.get(AGENT, "s1") == 2

    asyncio.run(scenario())


def test_aba_config_switch_mid_extraction_commits_nothing(
    harness: Harness, gated: GatedExtractor
) -> None:
    """R-WRITE-6: A→B→A while a chunk is being extracted: the fence rejects the result —
    no claim, no cursor move, an explicit stale outcome — and the next turn under the
    current A extracts the range again."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        harness.say("s1", "I live in Paris.")
        handle = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        assert handle is not None
        await gated.entered.wait()

        await harness.coordinator.reconfigure(AGENT, "B")
        await harness.coordinator.reconfigure(AGENT, "A")
        gated.gate.set()
        await handle.wait()

        report = runtime.last_report
        assert report is not None and report.outcome is IngestionOutcome.STALE_FENCE
        assert report.chunks == () and report.cursor_after == 0
        assert harness.claims() == [] and harness.committed == []
        assert harness.cursors.get(AGENT, "s1") == 0

        again = await harness.settle(runtime)
        assert again.outcome is IngestionOutcome.COMPLETED
        assert [claim.content for claim in harness.claims()] == ["The user lives in Paris."]
        assert harness.cursors.get(AGENT, "s1") == 2

    asyncio.run(scenario())


def test_destructive_operation_mid_extraction_commits_nothing(
    harness: Harness, gated: GatedExtractor
) -> None:
    """R-WRITE-6: a clear/forget invalidates the agent's in-flight work."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        harness.say("s1", "I live in Paris.")
        handle = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        assert handle is not None
        await gated.entered.wait()
        harness.coordinator.invalidate(AGENT)
        gated.gate.set()
        await handle.wait()
        assert runtime.last_report is not None
        assert runtime.last_report.outcome is IngestionOutcome.STALE_FENCE
        assert harness.claims() == [] and harness.cursors.get(AGENT, "s1") == 0

    asyncio.run(scenario())


def test_invalidation_mid_extraction_ends_stale_epoch_without_commit(
    harness: Harness, gated: GatedExtractor
) -> None:
    """R-WRITE-3, R-WRITE-6: an edit while a chunk is in flight fences it by the epoch."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        harness.say("s1", "I live in Paris.")
        handle = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        assert handle is not None
        await gated.entered.wait()
        runtime.invalidate_from(1)
        gated.gate.set()
        await handle.wait()
        assert runtime.last_report is not None
        assert runtime.last_report.outcome is IngestionOutcome.STALE_EPOCH
        assert harness.claims() == [] and harness.cursors.get(AGENT, "s1") == 0

    asyncio.run(scenario())


def test_turns_settling_during_a_pass_are_picked_up_by_the_same_chain(
    harness: Harness, gated: GatedExtractor
) -> None:
    """R-WRITE-1: a session's passes never overlap; a turn that settles meanwhile is
    extracted right after, from the advanced cursor."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        harness.say("s1", "I live in Paris.")
        first = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        await gated.entered.wait()
        harness.say("s1", "I work at Acme.")
        second = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        assert second is first  # queued on the running chain, not a second task
        gated.gate.set()
        assert first is not None
        await first.wait()
        assert gated.order_seqs() == [[1, 2], [3, 4]]
        assert harness.cursors.get(AGENT, "s1") == 4
        assert {claim.content for claim in harness.claims()} == {
            "The user lives in Paris.",
            "The user works at Acme.",
        }

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("outcome", "admitted"),
    [
        (TurnOutcome(status=TurnStatus.COMPLETED), True),
        (TurnOutcome(status=TurnStatus.ABORTED), False),  # an initial turn must complete
        (TurnOutcome(status=TurnStatus.ABORTED, origin="resume"), True),
        (TurnOutcome(status=TurnStatus.ERROR, origin="resume"), False),  # thrown: never
    ],
)
def test_admission_follows_turn_status_and_origin(
    harness: Harness, gated: GatedExtractor, outcome: TurnOutcome, admitted: bool
) -> None:
    """§7.1: initial turns when completed; other origins when completed or aborted."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        harness.say("s1", "I live in Paris.")
        handle = runtime.after_turn_settled(outcome)
        assert (handle is not None) is admitted
        if handle is None:
            assert runtime.last_report is not None
            assert runtime.last_report.outcome is IngestionOutcome.NOT_ADMITTED
            return
        gated.gate.set()
        await handle.wait()
        assert harness.cursors.get(AGENT, "s1") == 2

    asyncio.run(scenario())


def test_hard_task_cancellation_still_settles_with_an_outcome(
    harness: Harness, gated: GatedExtractor
) -> None:
    """R-WRITE-6: a scheduler cancel (shutdown) ends the pass CANCELLED, nothing committed."""

    async def scenario() -> None:
        runtime = harness.runtime("s1")
        harness.say("s1", "I live in Paris.")
        handle = runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
        assert handle is not None
        await gated.entered.wait()
        handle.cancel()
        await handle.wait()
        assert runtime.last_report is not None
        assert runtime.last_report.outcome is IngestionOutcome.CANCELLED
        assert harness.claims() == [] and harness.cursors.get(AGENT, "s1") == 0

    asyncio.run(scenario())


def test_closed_runtime_refuses_new_turns(harness: Harness) -> None:
    """R-HOST-1: a destroyed session takes no more work."""
    runtime = harness.runtime("s1")
    assert runtime.close() is None
    assert runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED)) is None
    assert runtime.last_report is not None
    assert runtime.last_report.outcome is IngestionOutcome.NOT_ADMITTED
