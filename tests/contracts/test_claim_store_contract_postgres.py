"""The ClaimStore contract against the PostgreSQL claim store (R-BEYOND-4, R-ARCH-5).

One throwaway PostgreSQL serves the whole test session; every test gets a schema of its own.
A server that cannot start fails these tests loudly with its reason — never a skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_adapters.postgres_store import PostgresClaimStore
from memory_adapters.postgres_store.testing import ThrowawayServer, throwaway_server
from memory_contracts.claim_store import ClaimStoreContract
from memory_contracts.fakes import ManualClock
from memory_core.ports.secrets import SecretPolicy


@pytest.fixture(scope="session")
def postgres(request: pytest.FixtureRequest) -> ThrowawayServer:
    return throwaway_server(request.config)


class TestPostgresClaimStoreContract(ClaimStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres: ThrowawayServer) -> None:
        self.postgres = postgres

    def make_claim_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> PostgresClaimStore:
        return PostgresClaimStore(
            self.postgres.settings(), clock=clock, secret_policy=secret_policy
        )
