"""Circuit breaker on warm-recall query embedding, per (agent, embedding identity) (R-PROV-2).

When the embedding provider keeps failing, each turn would otherwise spend its whole query
deadline waiting for it; the breaker lets recall skip the vector path (FTS candidates only)
for a cooldown instead. Rules: `threshold` failures within `window` seconds open it for
`open_seconds`; after that exactly one half-open probe is let through (concurrent calls are
skipped while it runs); the probe's success closes it, its failure re-opens it. Only
provider-health failures count — a cancellation or a local capacity rejection is neutral.
A success while closed clears the count ("consecutive" failures). Time is `InfraClock` time.

The gateway applies it only to warm-recall query embedding, never to batch embedding,
warm-up, dimension discovery or text generation.
"""

from __future__ import annotations

import itertools
from enum import StrEnum

import attrs

from memory_core.ports.clock import InfraClock
from memory_core.settings import MemorySettings

__all__ = ["BreakerPermit", "BreakerState", "CircuitBreakers"]


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "halfOpen"  # cooldown over: the next call (or the running one) is the probe


@attrs.frozen(kw_only=True)
class BreakerPermit:
    """Leave to make one call; hand it back with exactly one `record_*`/`release` call."""

    agent_id: str
    identity: str
    probe: bool
    generation: int  # which circuit issued it: permits of a reset circuit are ignored


@attrs.define
class _Circuit:
    identity: str
    generation: int
    failures: list[float] = attrs.field(factory=list)
    open_until: float | None = None
    probing: bool = False


class CircuitBreakers:
    """All breakers of one gateway: one circuit per agent, keyed to its current identity."""

    def __init__(self, clock: InfraClock, settings: MemorySettings) -> None:
        self._clock = clock
        self._threshold = settings.breaker_failure_threshold
        self._window = settings.breaker_window_seconds
        self._open_for = settings.breaker_open_seconds
        self._circuits: dict[str, _Circuit] = {}
        self._generations = itertools.count(1)

    def acquire(self, agent_id: str, identity: str) -> BreakerPermit | None:
        """A permit for one call, or None when the call must be skipped (open or probing)."""
        circuit = self._circuit_for(agent_id, identity)
        probe = False
        if circuit.open_until is not None:
            if self._clock.monotonic() < circuit.open_until or circuit.probing:
                return None
            circuit.probing = probe = True
        return BreakerPermit(
            agent_id=agent_id, identity=identity, probe=probe, generation=circuit.generation
        )

    def record_success(self, permit: BreakerPermit) -> None:
        circuit = self._live(permit)
        if circuit is None:
            return
        if permit.probe or circuit.open_until is None:
            circuit.failures.clear()
            circuit.open_until = None
            circuit.probing = False
        # A call admitted before the circuit opened proves little about now: the probe decides.

    def record_failure(self, permit: BreakerPermit) -> None:
        circuit = self._live(permit)
        if circuit is None:
            return
        now = self._clock.monotonic()
        if permit.probe:
            circuit.probing = False
            circuit.open_until = now + self._open_for
            return
        if circuit.open_until is not None:
            return  # already open; a straggler admitted earlier adds nothing
        circuit.failures = [t for t in circuit.failures if now - t < self._window]
        circuit.failures.append(now)
        if len(circuit.failures) >= self._threshold:
            circuit.failures.clear()
            circuit.open_until = now + self._open_for

    def release(self, permit: BreakerPermit) -> None:
        """The call ended without saying anything about health (cancelled, capacity)."""
        circuit = self._live(permit)
        if circuit is not None and permit.probe:
            circuit.probing = False  # the next call after this becomes the probe

    def state(self, agent_id: str, identity: str) -> BreakerState:
        circuit = self._circuits.get(agent_id)
        if circuit is None or circuit.identity != identity or circuit.open_until is None:
            return BreakerState.CLOSED
        if self._clock.monotonic() < circuit.open_until:
            return BreakerState.OPEN
        return BreakerState.HALF_OPEN

    def reset_agent(self, agent_id: str) -> None:
        """Agent cleanup or reconfiguration: forget its circuit; its permits become inert."""
        self._circuits.pop(agent_id, None)

    def reset_all(self) -> None:
        """Disposal."""
        self._circuits.clear()

    def _circuit_for(self, agent_id: str, identity: str) -> _Circuit:
        circuit = self._circuits.get(agent_id)
        if circuit is None or circuit.identity != identity:
            # A new identity is a new provider/model: the old one's health says nothing.
            circuit = _Circuit(identity=identity, generation=next(self._generations))
            self._circuits[agent_id] = circuit
        return circuit

    def _live(self, permit: BreakerPermit) -> _Circuit | None:
        circuit = self._circuits.get(permit.agent_id)
        if circuit is None or circuit.generation != permit.generation:
            return None
        return circuit
