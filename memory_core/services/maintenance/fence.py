"""What every step of a pass shares: the store roles it calls and its execution fence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import OperationCancelled, ProviderError
from memory_core.domain.tokens import estimate_tokens
from memory_core.ports.claims import ClaimReader, Conflicts, Consolidation, Personas
from memory_core.ports.providers import ChatMessage, TextRequest
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.providers.gateway.types import TextPurpose
from memory_core.settings import MemorySettings

__all__ = ["MaintenanceStore", "PassFence", "PassTally", "ask_model"]


class MaintenanceStore(ClaimReader, Consolidation, Conflicts, Personas, Protocol):
    """What a pass reads and writes (a `ClaimStore` is one)."""


@attrs.define
class PassFence:
    """The execution fence of one pass: the service's epoch when it began and its token.
    `stop()` advances the epoch and cancels the token; `check` is the checkpoint."""

    epoch: int
    current: Callable[[], int]
    token: CancellationToken = attrs.field(factory=CancellationToken)

    @property
    def valid(self) -> bool:
        return self.epoch == self.current() and not self.token.cancelled

    def check(self) -> None:
        if not self.valid:
            raise OperationCancelled("maintenance stopped")


@attrs.define
class PassTally:
    """Counts of one pass and the model budget it has spent (reference §8.3: at most
    `maintenance_llm_calls` in all, a cap per step, `maintenance_input_tokens`)."""

    seeds: int = 0
    settled: int = 0
    deferred: int = 0
    merged: int = 0
    resolved: int = 0
    reflected: int = 0
    persona_drafts: int = 0
    llm_calls: int = 0
    llm_failures: int = 0
    input_tokens: int = 0
    calls_by_step: dict[str, int] = attrs.field(factory=dict)

    def reserve(self, step: str, tokens: int, settings: MemorySettings) -> bool:
        """Take one model call of `tokens` estimated input for `step`, if the budget
        allows; False (nothing taken) when it does not."""
        caps = {
            "merge": settings.maintenance_merge_llm_calls,
            "challenge": settings.maintenance_challenge_llm_calls,
            "reflection": settings.maintenance_reflection_llm_calls,
            "persona": settings.maintenance_persona_llm_calls,
        }
        if (
            self.llm_calls >= settings.maintenance_llm_calls
            or self.calls_by_step.get(step, 0) >= caps[step]
            or self.input_tokens + tokens > settings.maintenance_input_tokens
        ):
            return False
        self.llm_calls += 1
        self.input_tokens += tokens
        self.calls_by_step[step] = self.calls_by_step.get(step, 0) + 1
        return True


async def ask_model(
    gateway: ProviderGateway,
    agent_id: str,
    *,
    step: str,
    settings: MemorySettings,
    system: str,
    prompt: str,
    temperature: float,
    fence: PassFence,
    deadline: Deadline,
    tally: PassTally,
    max_tokens: int | None = None,
    json_output: bool = False,
) -> str | None:
    """One model call of the maintenance `step`, first reserved from the pass's budget: its
    estimated input is the system text, the prompt and room for `max_tokens` of answer. None
    when the budget refuses it (nothing taken, nothing asked) or when the provider fails
    (counted as a failed call). Bound by the pass's deadline and cancelled by its fence; a
    late answer after `stop()` raises at the checkpoint instead of being returned, so it never
    writes."""
    tokens = estimate_tokens(system) + estimate_tokens(prompt) + (max_tokens or 0)
    if not tally.reserve(step, tokens, settings):
        return None
    request = TextRequest(
        messages=(
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=prompt),
        ),
        temperature=temperature,
        max_tokens=max_tokens,
        json_output=json_output,
    )
    try:
        answer = await gateway.complete(
            agent_id=agent_id,
            request=request,
            deadline=deadline,
            cancel=fence.token,
            purpose=TextPurpose.MAINTENANCE,
        )
    except ProviderError:
        tally.llm_failures += 1
        return None
    fence.check()
    return answer
