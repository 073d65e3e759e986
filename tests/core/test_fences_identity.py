"""Execution identities, session epochs and write tickets (R-WRITE-6)."""

from __future__ import annotations

import json

import pytest

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_core.domain.errors import FencedError
from memory_core.services.write.fences import (
    AgentFences,
    SessionEpochs,
    WriteCoordinator,
    execution_fingerprint,
)


def test_aba_config_switch_leaves_identity_captured_under_first_a_stale() -> None:
    """R-WRITE-6: A→B→A lands on a new generation, so work from the first A never commits."""
    fences = AgentFences()
    first_a = fences.configure("agent-1", "A")
    fences.configure("agent-1", "B")
    second_a = fences.configure("agent-1", "A")

    assert second_a.config_fingerprint == first_a.config_fingerprint
    assert second_a.generation > first_a.generation
    assert not fences.is_current(first_a)
    with pytest.raises(FencedError):
        fences.check(first_a)
    fences.check(second_a)


def test_reapplying_the_same_configuration_keeps_work_current() -> None:
    """R-WRITE-6: only a different fingerprint fences; re-saving settings unchanged does not."""
    fences = AgentFences()
    captured = fences.configure("agent-1", "A")
    fences.configure("agent-1", "A")
    assert fences.is_current(captured)


def test_destructive_operation_fences_only_its_own_agent() -> None:
    """R-WRITE-6: a clear/forget of one agent stales that agent's identities, not others'."""
    fences = AgentFences()
    mine = fences.configure("agent-1", "A")
    other = fences.configure("agent-2", "A")
    fences.invalidate("agent-1")
    assert not fences.is_current(mine)
    assert fences.is_current(other)


def test_session_epoch_bump_stales_captured_epoch_and_never_resets() -> None:
    """R-WRITE-3: invalidation/fork/destroy move the epoch on; old captures stay stale."""
    epochs = SessionEpochs()
    captured = epochs.current("s1")
    epochs.bump("s1")
    assert not epochs.is_current("s1", captured)
    with pytest.raises(FencedError):
        epochs.check("s1", captured)
    assert epochs.is_current("s2", 0)


def test_ticket_is_stale_after_either_the_fence_or_the_epoch_moves() -> None:
    """R-WRITE-6: a write ticket needs both its execution identity and its epoch current."""
    coordinator = WriteCoordinator(AsyncioScheduler())
    coordinator.fences.configure("agent-1", "A")
    ticket = coordinator.ticket("agent-1", "s1")
    assert coordinator.is_valid(ticket)

    coordinator.epochs.bump("s1")
    assert not coordinator.is_valid(ticket)
    with pytest.raises(FencedError):
        coordinator.check(ticket)

    fresh = coordinator.ticket("agent-1", "s1")
    coordinator.invalidate("agent-1")
    assert not coordinator.is_valid(fresh)


def test_execution_fingerprint_follows_the_reference_layout() -> None:
    """R-WRITE-6: `[memoryEnabled, [provider, model] | null]`, with optional extra identity."""
    assert json.loads(
        execution_fingerprint(memory_enabled=True, embedding=("local", "minilm"))
    ) == [True, ["local", "minilm"]]
    assert json.loads(execution_fingerprint(memory_enabled=False, embedding=None)) == [
        False,
        None,
    ]
    with_extractor = execution_fingerprint(
        memory_enabled=True, embedding=None, extra=("extractor:llm",)
    )
    assert with_extractor != execution_fingerprint(memory_enabled=True, embedding=None)
