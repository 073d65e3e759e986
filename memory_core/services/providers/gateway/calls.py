"""The gateway's one call path: every provider call is admitted, linked, accounted and typed
here (R-PROV-1, R-PROV-3, R-PROV-5).

Admission refuses a cancelled call, a call whose deadline already passed, and one over the
local capacity (per agent/provider/model/purpose and in all). An admitted call gets a token
of its own linked to the caller's, so `abort_agent` reaches exactly that agent's calls while
the caller's token keeps working. Outcomes are counted per (event, purpose) and the recent
latencies kept; a library exception a provider leaks is typed and says no more.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    CapacityRejected,
    DeadlineExceeded,
    OperationCancelled,
    ProviderError,
    ProviderResponseError,
    ValidationError,
)
from memory_core.ports.clock import InfraClock
from memory_core.ports.providers import EmbeddingProvider, TextProvider
from memory_core.services.providers.gateway.types import (
    CapacityLimits,
    GatewayDiagnostics,
    LatencySample,
)

__all__ = ["ProviderCalls", "require_call_args"]

T = TypeVar("T")

_Slot = tuple[str, str, str, str]  # agent, provider, model, purpose


def require_call_args(deadline: object, cancel: object) -> None:
    if not isinstance(deadline, Deadline):
        raise ValidationError("deadline", "every provider call needs a Deadline (R-ARCH-6)")
    if not isinstance(cancel, CancellationToken):
        raise ValidationError("cancel", "every provider call needs a CancellationToken")


class ProviderCalls:
    """The calls in flight of one gateway, and what became of the finished ones."""

    def __init__(self, clock: InfraClock, limits: CapacityLimits, latency_samples: int) -> None:
        self._clock = clock
        self._limits = limits
        self._slots: Counter[_Slot] = Counter()
        self._slots_total = 0
        self._calls: dict[str, set[CancellationToken]] = {}
        self._counts: Counter[tuple[str, str]] = Counter()
        self._latencies: deque[LatencySample] = deque(maxlen=latency_samples)

    def room(self, agent_id: str, provider: EmbeddingProvider | TextProvider, purpose: str) -> int:
        """Calls the key (agent, provider, model, purpose) may still start now."""
        slot = (agent_id, provider.provider_id, provider.model_id, str(purpose))
        return min(self._limits.per_key - self._slots[slot], self._limits.total - self._slots_total)

    async def invoke(
        self,
        call: Callable[[Deadline, CancellationToken], Awaitable[T]],
        *,
        agent_id: str,
        provider: EmbeddingProvider | TextProvider,
        purpose: str,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> T:
        if cancel.cancelled:
            self.count("cancelled", purpose)
            raise OperationCancelled(cancel.reason or "cancelled")
        if deadline.expired:
            self.count("deadline", purpose)
            raise DeadlineExceeded(f"{purpose}: the deadline passed before the call")
        slot = (agent_id, provider.provider_id, provider.model_id, str(purpose))
        if self._slots_total >= self._limits.total or self._slots[slot] >= self._limits.per_key:
            self.count("capacityRejected", purpose)
            raise CapacityRejected(f"{purpose}: provider capacity reached for this agent")
        self._slots[slot] += 1
        self._slots_total += 1
        self.count("admitted", purpose)
        # One token per call, so abort_agent reaches exactly this agent's calls while the
        # caller's own token keeps working through the link.
        token = CancellationToken()
        unlink = cancel.on_cancel(lambda: token.cancel(cancel.reason or "cancelled"))
        calls = self._calls.get(agent_id)
        if calls is None:
            calls = self._calls[agent_id] = set()
        calls.add(token)
        started = self._clock.monotonic()
        outcome = "failed"
        try:
            result = await call(deadline, token)
            if token.cancelled:
                self.count("lateAbsorbed", purpose)  # the provider ignored the token
                raise OperationCancelled(token.reason or "cancelled")
            outcome = "ok"
            return result
        except OperationCancelled:
            outcome = "cancelled"
            raise
        except DeadlineExceeded:
            outcome = "deadline"
            raise
        except ProviderError:
            if token.cancelled:  # e.g. a connection torn down by the cancel itself
                outcome = "cancelled"
                raise OperationCancelled(token.reason or "cancelled") from None
            raise
        except Exception as exc:
            # A third-party provider leaked a library exception: type it and say no more (its
            # message may carry a URL or a key), not even as the new error's __context__.
            foreign = type(exc).__name__
        finally:
            unlink()
            self._settle(agent_id, token, slot)
            if outcome != "ok":
                self.count(outcome, purpose)
            elapsed = 1000.0 * (self._clock.monotonic() - started)
            self._latencies.append(
                LatencySample(
                    purpose=str(purpose),
                    provider=provider.provider_id,
                    model=provider.model_id,
                    elapsed_ms=elapsed,
                    outcome=outcome,
                )
            )
        raise ProviderResponseError(f"{purpose}: provider raised {foreign}")

    def abort_agent(self, agent_id: str, reason: str) -> int:
        """Cancel the agent's calls in flight; how many."""
        tokens = list(self._calls.get(agent_id, ()))
        for token in tokens:
            token.cancel(reason)
        return len(tokens)

    def agents(self) -> list[str]:
        """The agents with calls in flight."""
        return list(self._calls)

    def count(self, event: str, purpose: str) -> None:
        self._counts[(event, str(purpose))] += 1

    def diagnostics(self) -> GatewayDiagnostics:
        return GatewayDiagnostics(
            counts=dict(self._counts),
            in_flight=self._slots_total,
            latencies=tuple(self._latencies),
        )

    def _settle(self, agent_id: str, token: CancellationToken, slot: _Slot) -> None:
        calls = self._calls.get(agent_id)
        if calls is not None:
            calls.discard(token)
            if not calls:
                del self._calls[agent_id]
        self._slots[slot] -= 1
        if not self._slots[slot]:
            del self._slots[slot]
        self._slots_total -= 1
