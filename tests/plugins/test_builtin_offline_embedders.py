"""The offline embedders are first-party plugins like any other (R-ARCH-3, R-PROV-6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.ports.providers import EmbeddingProvider
from memory_plugins.context import FactoryContext
from memory_plugins.errors import PluginLoadError
from memory_plugins.loader import load_plugins


@pytest.fixture(scope="module")
def registry():
    return load_plugins(strict=True, distributions={"agent-memory"}).registry


def test_offline_embedders_are_listed_through_the_entry_point(registry) -> None:
    """R-ARCH-3: local-minilm and hashing register through the agent_memory group."""
    names = registry.names("embedding_provider")
    assert {"local-minilm", "hashing"} <= set(names)
    assert registry.get("embedding_provider", "local-minilm").distribution == "agent-memory"


def test_hashing_embedder_is_built_from_its_options(registry, tmp_path: Path) -> None:
    context = FactoryContext(data_dir=tmp_path, options={"dimensions": 64})
    embedder = registry.create_embedding_provider("hashing", context)
    assert isinstance(embedder, EmbeddingProvider)
    assert embedder.model_id == "fnv1a-lexical-64"


def test_bad_embedder_options_name_the_key(registry, tmp_path: Path) -> None:
    with pytest.raises(PluginLoadError, match=r"options\.dimensions"):
        registry.create_embedding_provider(
            "hashing", FactoryContext(data_dir=tmp_path, options={"dimensions": 2})
        )
    with pytest.raises(PluginLoadError, match="threads"):
        registry.create_embedding_provider(
            "local-minilm", FactoryContext(data_dir=tmp_path, options={"threads": 0})
        )
