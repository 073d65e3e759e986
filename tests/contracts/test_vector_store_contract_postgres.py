"""The VectorStore contract against the pgvector store (R-BEYOND-4, R-ARCH-5, R-HOST-3).

One throwaway PostgreSQL serves the whole test session; each test gets a schema of its
own, and each call of the opener is a new store object (a reopen) over that schema.
A server that cannot start fails these tests loudly with its reason — never a skip.
"""

from __future__ import annotations

import pytest

from memory_adapters.postgres_store import ConnectionSettings, PostgresVectorStore
from memory_adapters.postgres_store.testing import ThrowawayServer, throwaway_server
from memory_contracts.vector_store import Opener, VectorStoreContract


@pytest.fixture(scope="session")
def postgres(request: pytest.FixtureRequest) -> ThrowawayServer:
    return throwaway_server(request.config)


class TestPostgresVectorStoreContract(VectorStoreContract):
    @pytest.fixture
    def open_vector_store(self, postgres: ThrowawayServer) -> Opener:
        settings: ConnectionSettings = postgres.settings()
        return lambda: PostgresVectorStore(settings)
