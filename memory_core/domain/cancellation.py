"""Deadlines and cancellation tokens: the two arguments every waiting port method takes.

Pure values, read against any `InfraClock` — no asyncio here, so the core stays free of I/O
machinery; adapters turn a `Deadline` into `asyncio.timeout(...)` and hook a token's
callbacks to `interrupt()` or to aborting an HTTP request. Their errors, `DeadlineExceeded`
and `OperationCancelled`, are in `memory_core.domain.errors`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import attrs

from memory_core.domain.errors import DeadlineExceeded, OperationCancelled

__all__ = ["CancellationToken", "Deadline", "MonotonicReading"]


class MonotonicReading(Protocol):
    """What a deadline reads: monotonic seconds. Every `memory_core.ports.clock.InfraClock`
    is one; the domain states only this much so that it stays below the ports layer."""

    def monotonic(self) -> float: ...


@attrs.frozen(kw_only=True)
class Deadline:
    """An absolute point on the monotonic clock after which work must stop."""

    expires_at: float
    clock: MonotonicReading = attrs.field(eq=False, repr=False)

    @classmethod
    def after(cls, clock: MonotonicReading, seconds: float) -> Deadline:
        if seconds < 0:
            raise ValueError("seconds must be >= 0")
        return cls(expires_at=clock.monotonic() + seconds, clock=clock)

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.expires_at - self.clock.monotonic())

    @property
    def expired(self) -> bool:
        return self.clock.monotonic() >= self.expires_at

    def earliest(self, other: Deadline | None) -> Deadline:
        if other is None or self.expires_at <= other.expires_at:
            return self
        return other

    def raise_if_expired(self, what: str = "operation") -> None:
        if self.expired:
            raise DeadlineExceeded(f"{what} exceeded its deadline")


class CancellationToken:
    """Cooperative cancellation shared by a caller and the work it started.

    Callbacks run once, synchronously, in registration order, when `cancel` is first
    called; a callback registered after cancellation runs at once.
    """

    __slots__ = ("_callbacks", "_cancelled", "_parent_unlink", "_reason")

    def __init__(self) -> None:
        self._cancelled = False
        self._reason = ""
        self._callbacks: list[Callable[[], None]] = []
        self._parent_unlink: Callable[[], None] | None = None

    @classmethod
    def linked_to(cls, parent: CancellationToken | None) -> CancellationToken:
        """A child token cancelled with its parent (but not the other way round)."""
        child = cls()
        if parent is not None:
            child._parent_unlink = parent.on_cancel(lambda: child.cancel(parent.reason))
        return child

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def reason(self) -> str:
        return self._reason

    def cancel(self, reason: str = "cancelled") -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Register `callback`; returns a function that unregisters it."""
        if self._cancelled:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def unregister() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unregister

    def raise_if_cancelled(self) -> None:
        if self._cancelled:
            raise OperationCancelled(self._reason or "cancelled")
