"""Constants shared by the DuckDB vector adapter tests (imported by path, not a package)."""

from __future__ import annotations

from memory_core.domain.claims import EmbeddingIdentity

IDENTITY = EmbeddingIdentity(provider="test", model="unit", dim=4)
