"""DuckDB v2 vector files with a resident numpy exact scan (R-VEC-1..4).

One file per agent, `<root>/<agentId>.v2.duckdb`; queries scan a per-agent float32 matrix in
memory, exact cosine, never an approximate index. Published through a staging file and an
atomic rename; quarantined and recovered through a marker file; v1 files migrated once.
"""

from __future__ import annotations

from memory_adapters.duckdb_vectors.migrate_v1 import write_v1_file
from memory_adapters.duckdb_vectors.store import DuckDBVectorStore

__all__ = ["DuckDBVectorStore", "write_v1_file"]
