"""The demo's clock: business time pinned to each session's date, real monotonic time.

Pinning the date makes the demo reproducible ("last month" always resolves the same way);
deadlines still run on the real monotonic clock, so nothing can hang. Registered for one
`open_memory` call as a plugin object, under the name `demo` (R-ARCH-3: no private shortcut).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = ["DEMO_CLOCK", "DemoClock", "DemoClockPlugin"]

DEMO_CLOCK = "demo"


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


class DemoClockPlugin:
    """A plugin object handing one `DemoClock` to the composition root."""

    def __init__(self, clock: DemoClock) -> None:
        self.clock = clock

    def _make(self, context: FactoryContext) -> DemoClock:
        return self.clock

    @hookimpl
    def agent_memory_register_clocks(self, register: Register) -> None:
        register(
            DEMO_CLOCK,
            self._make,
            description="The demo's pinned business clock (one date per session).",
            capabilities=("domain", "infra"),
        )
