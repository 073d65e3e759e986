"""Clock ports: business time and infrastructure time are different clocks (R-ARCH-1).

`DomainClock` gives the instant facts are about (created_at, temporal eligibility, relative
dates); `InfraClock` gives monotonic seconds for deadlines, leases, breakers and latency.
Tests substitute a manual clock for both and never sleep to let time pass.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

__all__ = ["DomainClock", "InfraClock"]


@runtime_checkable
class DomainClock(Protocol):
    """Business time."""

    def now(self) -> datetime:
        """The current instant as a timezone-aware UTC datetime. Never naive."""
        ...

    def timezone(self) -> str:
        """The IANA zone in which the user speaks; relative dates resolve against it."""
        ...


@runtime_checkable
class InfraClock(Protocol):
    """Monotonic time for deadlines, cooldowns and measurements."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes backwards."""
        ...
