"""First-party clock registration: "system" — wall-clock UTC business time + monotonic time.

Registered through the `agent_memory` entry-point group like any third-party plugin
(R-ARCH-3); the composition root picks it by name from `[plugins.clock]` (R-ARCH-5).
"""

from __future__ import annotations

from datetime import datetime

import attrs

from memory_adapters.clocks import MonotonicClock, SystemClock
from memory_core.domain.errors import ConfigError, ValidationError
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = ["SystemClockOptions", "SystemClocks", "agent_memory_register_clocks"]


@attrs.frozen(kw_only=True)
class SystemClockOptions:
    """`[plugins.clock.options]` of the "system" clock."""

    timezone: str = "UTC"  # the IANA zone the user speaks in; relative dates resolve in it


class SystemClocks:
    """Both clock ports in one object, so one `[plugins.clock]` choice serves both."""

    def __init__(self, timezone: str = "UTC") -> None:
        self._domain = SystemClock(timezone)
        self._infra = MonotonicClock()

    def now(self) -> datetime:
        return self._domain.now()

    def timezone(self) -> str:
        return self._domain.timezone()

    def monotonic(self) -> float:
        return self._infra.monotonic()


def _make_system_clocks(context: FactoryContext) -> SystemClocks:
    options = structure_options(context.options, SystemClockOptions, family="clock")
    try:
        return SystemClocks(options.timezone)
    except ValidationError as exc:
        raise ConfigError(f"plugins.clock.options.timezone: {exc.reason}") from exc


@hookimpl
def agent_memory_register_clocks(register: Register) -> None:
    register(
        "system",
        _make_system_clocks,
        description="System wall clock (UTC) for business time and time.monotonic for deadlines.",
        capabilities=("domain", "infra"),
    )
