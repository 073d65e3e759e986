"""The VectorStore contract run against every implementation we ship (R-ARCH-5, R-HOST-3).

The DuckDB adapter (file-backed and in-memory) and the pure-python fake pass the same suite,
so service tests that use the fake test against real semantics.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_contracts.fake_vector_store import InMemoryVectorStore, Namespace
from memory_contracts.fakes import ManualClock
from memory_contracts.vector_store import Opener, VectorStoreContract

# Capabilities a store lacks deselect the tests that need them, with the reason reported.
pytest_plugins = ["memory_contracts.pytest_plugin"]


class TestDuckDBVectorStoreContract(VectorStoreContract):
    @pytest.fixture
    def open_vector_store(self, tmp_path: Path, clock: ManualClock) -> Opener:
        return lambda: DuckDBVectorStore(tmp_path / "vectors", clock)


class TestDuckDBInMemoryVectorStoreContract(VectorStoreContract):
    capabilities = frozenset()  # in-memory databases: nothing survives a reopen

    @pytest.fixture
    def open_vector_store(self, clock: ManualClock) -> Opener:
        return lambda: DuckDBVectorStore.in_memory(clock)


class TestInMemoryVectorStoreContract(VectorStoreContract):
    @pytest.fixture
    def open_vector_store(self) -> Opener:
        backing: dict[str, Namespace] = {}
        return lambda: InMemoryVectorStore(backing)
