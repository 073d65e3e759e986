"""The demo's clock: business time pinned to each session's date, real monotonic time.

Pinning the date makes the demo reproducible ("last month" always resolves the same way);
deadlines still run on the real monotonic clock, so nothing can hang. Handed to
`open_memory_async(clock=...)` directly, as any host may hand in its own clock.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

__all__ = ["DemoClock"]


class DemoClock:
    """DomainClock (a settable instant) and InfraClock (`time.monotonic`) in one object."""

    def __init__(self, start: datetime, timezone: str) -> None:
        self._now = start.astimezone(UTC)
        self._timezone = timezone

    def set(self, instant: datetime) -> None:
        """Move business time to `instant` (timezone-aware)."""
        self._now = instant.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def timezone(self) -> str:
        return self._timezone

    def monotonic(self) -> float:
        return time.monotonic()
