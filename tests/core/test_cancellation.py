"""Deadlines and cancellation tokens over a manual clock (R-ARCH-2, R-PROV-3)."""

from __future__ import annotations

import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    AgentMemoryError,
    DeadlineExceeded,
    OperationCancelled,
    ProviderError,
)

# --- Deadline ------------------------------------------------------------------------------


def test_deadline_counts_down_on_the_monotonic_clock() -> None:
    """R-ARCH-2: deadlines are absolute points on the InfraClock, not wall time."""
    clock = ManualClock(monotonic=100.0)
    deadline = Deadline.after(clock, 2.0)
    assert deadline.expires_at == 102.0
    assert deadline.remaining() == 2.0
    assert not deadline.expired
    clock.advance(1.5)
    assert deadline.remaining() == pytest.approx(0.5)
    assert not deadline.expired


def test_deadline_expires_exactly_at_its_instant_and_remaining_never_goes_negative() -> None:
    """R-ARCH-2: at `expires_at` the deadline has passed; remaining time bottoms out at 0."""
    clock = ManualClock(monotonic=0.0)
    deadline = Deadline.after(clock, 1.0)
    clock.advance(1.0)
    assert deadline.expired
    assert deadline.remaining() == 0.0
    clock.advance(5.0)
    assert deadline.remaining() == 0.0


def test_zero_deadline_is_already_expired() -> None:
    """R-ARCH-2: a zero budget means no waiting at all."""
    deadline = Deadline.after(ManualClock(), 0.0)
    assert deadline.expired
    with pytest.raises(DeadlineExceeded):
        deadline.raise_if_expired()


def test_negative_deadline_is_refused() -> None:
    """R-ARCH-2: a negative budget is a caller bug."""
    with pytest.raises(ValueError, match="seconds"):
        Deadline.after(ManualClock(), -0.1)


def test_raise_if_expired_raises_deadline_exceeded_naming_the_work() -> None:
    """R-PROV-1: a missed deadline raises DeadlineExceeded — a TimeoutError and the library's
    own error, but not a ProviderError: time running out says nothing about a provider."""
    clock = ManualClock()
    deadline = Deadline.after(clock, 0.8)
    deadline.raise_if_expired("query embedding")  # still in time: no error
    clock.advance(0.8)
    with pytest.raises(DeadlineExceeded, match="query embedding") as caught:
        deadline.raise_if_expired("query embedding")
    assert isinstance(caught.value, TimeoutError)
    assert isinstance(caught.value, AgentMemoryError)
    assert not isinstance(caught.value, ProviderError)


def test_earliest_picks_the_sooner_deadline() -> None:
    """R-ARCH-2: nested work runs under the tighter of two deadlines."""
    clock = ManualClock()
    soon = Deadline.after(clock, 1.0)
    late = Deadline.after(clock, 4.0)
    assert soon.earliest(late) is soon
    assert late.earliest(soon) is soon
    assert late.earliest(None) is late
    twin = Deadline.after(clock, 1.0)
    assert soon.earliest(twin) is soon  # ties keep the receiver


def test_deadlines_compare_by_instant_not_by_clock() -> None:
    """R-ARCH-2: deadlines are values of their expiry instant."""
    assert Deadline(expires_at=5.0, clock=ManualClock()) == Deadline(
        expires_at=5.0, clock=ManualClock()
    )


# --- CancellationToken ---------------------------------------------------------------------


def test_cancel_runs_callbacks_once_in_registration_order() -> None:
    """R-PROV-3: cancelling aborts every registered operation, exactly once."""
    token = CancellationToken()
    calls: list[str] = []
    token.on_cancel(lambda: calls.append("first"))
    token.on_cancel(lambda: calls.append("second"))
    assert not token.cancelled
    token.cancel("user stopped")
    token.cancel("again")
    assert calls == ["first", "second"]
    assert token.cancelled
    assert token.reason == "user stopped"


def test_callback_registered_after_cancellation_runs_at_once() -> None:
    """R-PROV-3: work that starts after cancellation is aborted immediately."""
    token = CancellationToken()
    token.cancel()
    calls: list[str] = []
    unregister = token.on_cancel(lambda: calls.append("late"))
    assert calls == ["late"]
    unregister()  # a no-op, not an error
    assert calls == ["late"]


def test_unregistered_callback_does_not_run() -> None:
    """R-PROV-3: finished work unhooks itself and is not aborted later."""
    token = CancellationToken()
    calls: list[str] = []
    unregister = token.on_cancel(lambda: calls.append("done work"))
    token.on_cancel(lambda: calls.append("live work"))
    unregister()
    unregister()  # idempotent
    token.cancel()
    assert calls == ["live work"]


def test_raise_if_cancelled_raises_operation_cancelled_with_the_reason() -> None:
    """R-PROV-2, R-PROV-3: cancellation is its own error, not a provider-health failure."""
    token = CancellationToken()
    token.raise_if_cancelled()  # not cancelled: no error
    token.cancel("turn aborted")
    with pytest.raises(OperationCancelled, match="turn aborted") as caught:
        token.raise_if_cancelled()
    assert isinstance(caught.value, AgentMemoryError)
    assert not isinstance(caught.value, ProviderError)


def test_default_reason_is_cancelled() -> None:
    """R-PROV-3: a cancel without a reason still says why."""
    token = CancellationToken()
    assert token.reason == ""
    token.cancel()
    assert token.reason == "cancelled"


def test_linked_child_is_cancelled_with_its_parent_and_inherits_the_reason() -> None:
    """R-PROV-3: cancelling a turn reaches every provider call it started."""
    parent = CancellationToken()
    child = CancellationToken.linked_to(parent)
    calls: list[str] = []
    child.on_cancel(lambda: calls.append("child work"))
    parent.cancel("turn aborted")
    assert child.cancelled
    assert child.reason == "turn aborted"
    assert calls == ["child work"]


def test_cancelling_a_child_leaves_the_parent_running() -> None:
    """R-PROV-3: one sub-call giving up does not abort the whole turn."""
    parent = CancellationToken()
    child = CancellationToken.linked_to(parent)
    child.cancel("sub-call timed out")
    assert child.cancelled
    assert not parent.cancelled


def test_child_of_a_cancelled_parent_starts_cancelled() -> None:
    """R-PROV-3: work spawned after cancellation never runs."""
    parent = CancellationToken()
    parent.cancel("shutdown")
    child = CancellationToken.linked_to(parent)
    assert child.cancelled
    assert child.reason == "shutdown"


def test_child_without_a_parent_is_independent() -> None:
    """R-PROV-3: `linked_to(None)` is a fresh token."""
    child = CancellationToken.linked_to(None)
    assert not child.cancelled
    child.cancel()
    assert child.cancelled
