"""Deterministic fakes for tests: behaviour + role names, no mocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory_core.domain.temporal import canonical_timezone, require_utc

__all__ = ["ManualClock"]


class ManualClock:
    """Both clocks at once, moved only by `advance`/`set`. Tests never sleep."""

    def __init__(
        self,
        now: datetime = datetime(2026, 1, 1, tzinfo=UTC),
        *,
        timezone: str = "UTC",
        monotonic: float = 1_000.0,
    ) -> None:
        self._now = require_utc(now, "now")
        self._timezone = canonical_timezone(timezone, field="clock.timezone")
        self._monotonic = monotonic

    def now(self) -> datetime:
        return self._now

    def timezone(self) -> str:
        return self._timezone

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float) -> None:
        """Move both clocks forward by `seconds`."""
        if seconds < 0:
            raise ValueError("clocks never go backwards")
        self._monotonic += seconds
        self._now += timedelta(seconds=seconds)

    def set(self, now: datetime) -> None:
        """Jump business time (e.g. to a fixture's epoch); monotonic time is untouched."""
        self._now = require_utc(now, "now")
