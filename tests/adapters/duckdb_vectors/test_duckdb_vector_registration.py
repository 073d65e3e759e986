"""The first-party vector stores register through the plugin host like any plugin (R-ARCH-3)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from duckdb_vector_support import IDENTITY

from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ConfigError
from memory_core.ports.vectors import VectorStore
from memory_plugins.builtin import vector_stores
from memory_plugins.context import FactoryContext
from memory_plugins.errors import PluginLoadError
from memory_plugins.loader import load_plugins


def test_duckdb_and_memory_stores_are_discovered_through_the_entry_point_group() -> None:
    """R-ARCH-3: "duckdb" and "memory" come from the agent-memory distribution."""
    registry = load_plugins(distributions=["agent-memory"]).registry
    for name in ("duckdb", "memory"):
        registration = registry.get("vector_store", name)
        assert registration.distribution == "agent-memory"
        assert registration.module == "memory_plugins.builtin.vector_stores"


def test_the_duckdb_factory_keeps_files_under_the_data_directory(tmp_path: Path) -> None:
    """R-HOST-2: the embedded default writes `<data_dir>/vectors/<agent>.v2.duckdb`."""
    registry = load_plugins(strict=True, entry_points=False, plugins=[vector_stores]).registry
    clock = ManualClock()
    context = FactoryContext(
        data_dir=tmp_path, infra_clock=clock, options={"max_open_stores": 3, "grace_seconds": 5}
    )
    store = registry.create_vector_store("duckdb", context)
    assert isinstance(store, DuckDBVectorStore) and isinstance(store, VectorStore)

    async def scenario() -> None:
        calls = {"deadline": Deadline.after(clock, 30), "cancel": CancellationToken()}
        await store.upsert("agent", IDENTITY, {"x": [1, 0, 0, 0]}, **calls)
        await store.aclose()

    asyncio.run(scenario())
    assert (tmp_path / "vectors" / "agent.v2.duckdb").exists()


def test_the_memory_factory_builds_a_store_without_files(tmp_path: Path) -> None:
    """R-ARCH-5: "memory" is a real store that persists nothing."""
    registry = load_plugins(strict=True, entry_points=False, plugins=[vector_stores]).registry
    store = registry.create_vector_store(
        "memory", FactoryContext(data_dir=tmp_path, infra_clock=ManualClock())
    )
    assert isinstance(store, DuckDBVectorStore) and store.root is None


@pytest.mark.parametrize(
    "options",
    [{"max_open_stores": 0}, {"grace_seconds": -1}, {"max_open": 3}, {"max_open_stores": "x"}],
)
def test_invalid_options_are_config_errors_naming_the_key(
    tmp_path: Path, options: dict[str, object]
) -> None:
    """R-ARCH-3: a wrong option fails at composition time, not deep inside a call."""
    registry = load_plugins(strict=True, entry_points=False, plugins=[vector_stores]).registry
    with pytest.raises(PluginLoadError) as raised:
        registry.create_vector_store("duckdb", FactoryContext(data_dir=tmp_path, options=options))
    assert isinstance(raised.value.__cause__, ConfigError)
    assert "plugins.vector_store.options" in str(raised.value)
