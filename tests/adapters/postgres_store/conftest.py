"""Fixtures for the PostgreSQL store tests: the session's throwaway server, a fresh schema
per test, clocks, and store factories that close what they open."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from memory_adapters.clocks import MonotonicClock
from memory_adapters.postgres_store import (
    ConnectionSettings,
    PostgresClaimStore,
    PostgresVectorStore,
)
from memory_adapters.postgres_store.testing import ThrowawayServer, throwaway_server
from memory_contracts.fakes import ManualClock
from memory_core.domain.secrets import PatternSecretPolicy


@pytest.fixture(scope="session")
def postgres(request: pytest.FixtureRequest) -> ThrowawayServer:
    return throwaway_server(request.config)


@pytest.fixture
def settings(postgres: ThrowawayServer) -> ConnectionSettings:
    return postgres.settings()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def real_clock() -> MonotonicClock:
    return MonotonicClock()


@pytest.fixture
def open_claims(
    settings: ConnectionSettings, clock: ManualClock
) -> Iterator[Callable[..., PostgresClaimStore]]:
    opened: list[PostgresClaimStore] = []

    def make(**kwargs: object) -> PostgresClaimStore:
        kwargs.setdefault("secret_policy", PatternSecretPolicy(mode="reject"))
        kwargs.setdefault("clock", clock)
        store = PostgresClaimStore(kwargs.pop("settings", settings), **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def open_vectors(settings: ConnectionSettings) -> Callable[..., PostgresVectorStore]:
    def make(**kwargs: object) -> PostgresVectorStore:
        return PostgresVectorStore(kwargs.pop("settings", settings), **kwargs)  # type: ignore[arg-type]

    return make
