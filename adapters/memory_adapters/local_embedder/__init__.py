"""Offline embedders: the local MiniLM model (the embedded default) and a hashing embedder."""

from __future__ import annotations

from memory_adapters.local_embedder.hashing import HashingEmbedder
from memory_adapters.local_embedder.minilm import MINILM_DIMENSIONS, MINILM_SHA256, MiniLMEmbedder

__all__ = ["MINILM_DIMENSIONS", "MINILM_SHA256", "HashingEmbedder", "MiniLMEmbedder"]
