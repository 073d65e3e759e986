"""The "postgres" registrations through the composition root: a host on PostgreSQL remembers,
recalls (both sources) and deletes exactly as on the embedded files (R-BEYOND-4, R-ARCH-3)."""

from __future__ import annotations

import importlib
import os
import pkgutil
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import memory_plugins.builtin
from memory_adapters.postgres_store.embedded import EmbeddedPostgres
from memory_adapters.postgres_store.testing import ThrowawayServer
from memory_plugins.api import SyncMemory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.errors import PluginLoadError
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry

AGENT = "assistant"
ACCOUNT = "nobody" if os.geteuid() == 0 else None


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    """Every first-party plugin module, registered directly: independent of which entry
    points the installed metadata happens to list."""
    modules = [
        importlib.import_module(f"memory_plugins.builtin.{info.name}")
        for info in pkgutil.iter_modules(memory_plugins.builtin.__path__)
    ]
    return load_plugins(strict=True, entry_points=False, plugins=modules).registry


def _config(**options: object) -> MemoryConfig:
    plugins = {
        **MemoryConfig().plugins,
        "embedding_provider": PluginChoice(name="hashing"),
        "claim_store": PluginChoice(name="postgres", options=dict(options)),
        "vector_store": PluginChoice(name="postgres", options=dict(options)),
    }
    return MemoryConfig(plugins=plugins)


def test_a_host_on_a_postgres_server_remembers_recalls_and_deletes(
    postgres: ThrowawayServer, registry: PluginRegistry, tmp_path: Path
) -> None:
    """R-BEYOND-4: the same host calls, the same answers, with PostgreSQL behind both ports."""
    settings = postgres.settings()
    config = _config(dsn=settings.dsn, schema=settings.schema)
    with SyncMemory(tmp_path / "data", config=config, registry=registry) as memory:
        stored = memory.remember(AGENT, "The user prefers metric units.")
        other = memory.remember(AGENT, "The user's sister lives in Porto.")
        assert stored.claim_id is not None and other.claim_id is not None
        assert memory.warm(AGENT)
        found = memory.recall(AGENT, "metric units")
        assert found.items and found.items[0].claim.id == stored.claim_id
        assert memory.delete(AGENT, stored.claim_id) >= 1
        assert stored.claim_id not in [i.claim.id for i in memory.recall(AGENT, "metric").items]


def test_the_source_of_the_database_must_be_exactly_one(
    registry: PluginRegistry, tmp_path: Path
) -> None:
    """A missing or doubled `dsn` / `dsn_env` / `embedded` is a ConfigError naming them (the
    registry reports it as the plugin failing to build, with the reason)."""
    for options in ({}, {"dsn": "host=/nowhere", "embedded": True}):
        with pytest.raises(PluginLoadError, match="exactly one of dsn, dsn_env, embedded"):
            SyncMemory(tmp_path / "data", config=_config(**options), registry=registry)
    with pytest.raises(PluginLoadError, match="AGENT_MEMORY_TEST_UNSET_DSN"):
        SyncMemory(
            tmp_path / "data",
            config=_config(dsn_env="AGENT_MEMORY_TEST_UNSET_DSN"),
            registry=registry,
        )


@pytest.fixture
def data_dir() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="agent-memory-plugin-"))
    if ACCOUNT is not None:
        shutil.chown(root, user=ACCOUNT)
    try:
        yield root / "data"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_embedded_true_runs_a_private_server_for_both_stores(
    registry: PluginRegistry, data_dir: Path
) -> None:
    """`embedded = true`: one server under <data_dir>/postgres serves both stores and stops
    when the memory closes."""
    config = _config(embedded=True, embedded_user=ACCOUNT)
    with SyncMemory(data_dir, config=config, registry=registry) as memory:
        stored = memory.remember(AGENT, "The user's cat is called Miso.")
        assert memory.warm(AGENT)
        assert [i.claim.id for i in memory.recall(AGENT, "cat Miso").items] == [stored.claim_id]
    status = subprocess.run(
        [
            str(EmbeddedPostgres(data_dir / "postgres", run_as=ACCOUNT).bin_dir / "pg_ctl"),
            "-D",
            str(data_dir / "postgres"),
            "status",
        ],
        capture_output=True,
        check=False,
        **({"user": ACCOUNT} if ACCOUNT else {}),  # type: ignore[arg-type]
    )
    assert status.returncode != 0  # stopped with the last store
