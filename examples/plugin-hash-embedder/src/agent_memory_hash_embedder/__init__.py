"""An example agent-memory plugin: the "hash-embedder" embedding provider."""

from __future__ import annotations

from agent_memory_hash_embedder.embedder import HashEmbedder

__all__ = ["HashEmbedder"]
