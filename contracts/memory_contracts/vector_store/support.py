"""What every vector-store case shares: identities, the opener fixture, clock and helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.ports.vectors import ReadyCertificate, VectorStore

__all__ = [
    "IDENTITY",
    "OTHER_DIM",
    "OTHER_MODEL",
    "Opener",
    "VectorStoreCases",
    "run",
    "with_store",
]

IDENTITY = EmbeddingIdentity(provider="contract", model="model-a", dim=4)
OTHER_MODEL = EmbeddingIdentity(provider="contract", model="model-b", dim=4)
OTHER_DIM = EmbeddingIdentity(provider="contract", model="model-a", dim=3)

Opener = Callable[[], VectorStore]


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def with_store(opener: Opener, scenario: Callable[[VectorStore], Awaitable[None]]) -> None:
    """Run `scenario` on a freshly opened store, closed afterwards whatever happens."""

    async def opened() -> None:
        store = opener()
        try:
            await scenario(store)
        finally:
            await store.aclose()

    asyncio.run(opened())


class VectorStoreCases:
    """The fixtures and helpers of the suite. Override `open_vector_store`."""

    #: What the store can do; "persistence": data survives a close and a reopen.
    capabilities: ClassVar[frozenset[str]] = frozenset({"persistence"})

    @pytest.fixture
    def open_vector_store(self) -> Opener:
        raise NotImplementedError("override the open_vector_store fixture")

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock()

    # --- helpers ----------------------------------------------------------------------

    @staticmethod
    def calls(clock: ManualClock) -> dict[str, Any]:
        """Keyword arguments for a call with a generous deadline and a fresh token."""
        return {"deadline": Deadline.after(clock, 60.0), "cancel": CancellationToken()}

    async def warmed(
        self, store: VectorStore, clock: ManualClock, agent: str, vectors: dict[str, list[float]]
    ) -> ReadyCertificate:
        await store.upsert(agent, IDENTITY, vectors, **self.calls(clock))
        report = await store.warm(
            agent, IDENTITY, list(vectors), config_generation=1, **self.calls(clock)
        )
        return report.certificate
