"""The hash embedder against agent-memory's contract suites, loaded through its entry point."""

from __future__ import annotations

from typing import ClassVar

import pytest

from memory_contracts.plugin import PluginConformance, conformance_context, load_strictly
from memory_contracts.providers import SENTINEL_SECRET, EmbeddingProviderContract

DISTRIBUTION = "agent-memory-hash-embedder"


class TestHashEmbedderContract(EmbeddingProviderContract):
    # Nothing remote can hang or fail, so the stalling/failing checks do not apply: they
    # are deselected, and the summary says why.
    capabilities = frozenset()

    @pytest.fixture
    def embedding_provider_factory(self, tmp_path, monkeypatch):
        # Built the way open_memory builds it: the installed entry point, the registry, a
        # factory context with options. The contract's sentinel secret is the hashing key.
        monkeypatch.setenv("HASH_EMBEDDER_KEY", SENTINEL_SECRET)
        registry = load_strictly(DISTRIBUTION)
        context = conformance_context(
            tmp_path,
            family="embedding_provider",
            options={"dimensions": 64, "key_env": "HASH_EMBEDDER_KEY"},
        )
        return lambda: registry.create_embedding_provider("hash-embedder", context)


class TestHashEmbedderPlugin(PluginConformance):
    entry_point = "hash-embedder"
    options: ClassVar = {"hash-embedder": {"dimensions": 32}}
