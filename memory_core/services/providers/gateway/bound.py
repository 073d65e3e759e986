"""A `TextProvider` view of the gateway for one agent and purpose, for code written against
the port (the LLM extractor), so its calls still get the gateway's deadline cap, capacity and
`abort_agent`."""

from __future__ import annotations

from typing import Protocol

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import TextProvider, TextRequest
from memory_core.services.providers.gateway.types import TextPurpose

__all__ = ["BoundTextProvider", "Completions"]


class Completions(Protocol):
    """What the view needs of the gateway: `ProviderGateway.complete`."""

    async def complete(
        self,
        *,
        agent_id: str,
        request: TextRequest,
        deadline: Deadline,
        cancel: CancellationToken,
        purpose: TextPurpose = ...,
    ) -> str: ...


class BoundTextProvider:
    """`ProviderGateway.text_provider_for`: one agent's completions through the gateway.

    Closing it does nothing: the gateway owns the provider.
    """

    def __init__(
        self, gateway: Completions, provider: TextProvider, agent_id: str, purpose: TextPurpose
    ) -> None:
        self._gateway = gateway
        self._provider = provider
        self._agent_id = agent_id
        self._purpose = purpose

    def __repr__(self) -> str:
        return f"BoundTextProvider({self._provider.provider_id!r}, agent={self._agent_id!r})"

    @property
    def provider_id(self) -> str:
        return self._provider.provider_id

    @property
    def model_id(self) -> str:
        return self._provider.model_id

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        return await self._gateway.complete(
            agent_id=self._agent_id,
            request=request,
            deadline=deadline,
            cancel=cancel,
            purpose=self._purpose,
        )

    async def aclose(self) -> None:
        return None
