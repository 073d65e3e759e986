"""The real clocks: wall-clock UTC for business time, `time.monotonic` for infrastructure."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from memory_core.domain.temporal import canonical_timezone

__all__ = ["MonotonicClock", "SystemClock"]


class SystemClock:
    """`DomainClock` over the system's wall clock, in a configured IANA zone."""

    def __init__(self, timezone: str = "UTC") -> None:
        self._timezone = canonical_timezone(timezone, field="clock.timezone")

    def now(self) -> datetime:
        return datetime.now(UTC)

    def timezone(self) -> str:
        return self._timezone


class MonotonicClock:
    """`InfraClock` over `time.monotonic`."""

    def monotonic(self) -> float:
        return time.monotonic()
