"""Warm-up leaves one resident copy of the matrix, not two (issue 15, R-VEC-1).

Reading every page into the resident matrix also fills DuckDB's buffer pool; the agent
store evicts those pages afterwards, so a file-backed namespace holds its vectors once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory_adapters.duckdb_vectors.agent_store import AgentStore
from memory_adapters.duckdb_vectors.guard import AbortFlag
from memory_adapters.duckdb_vectors.schema import connect, create_schema
from memory_core.domain.claims import EmbeddingIdentity

IDENTITY = EmbeddingIdentity(provider="test", model="wide", dim=384)
ROWS = 40_000  # 59 MiB of float32, well above the release limit


def _buffered_bytes(store: AgentStore) -> int:
    (used,) = store.conn.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
    return int(used or 0)


def test_reading_the_matrix_leaves_its_pages_out_of_duckdbs_buffer_pool(tmp_path: Path) -> None:
    """R-VEC-1: after warm-up the vectors are resident once (the matrix), and the file
    still answers reads."""
    conn = connect(tmp_path / "agent.v2.duckdb")
    create_schema(conn, IDENTITY)
    store = AgentStore(conn, IDENTITY, generation=1)
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((ROWS, IDENTITY.dim), dtype=np.float32)
    ids = [f"m{i:05d}" for i in range(ROWS)]
    store.write(ids, rows, AbortFlag())
    matrix, unusable = store.read_matrix(AbortFlag())
    try:
        assert (len(matrix), unusable) == (ROWS, [])
        assert _buffered_bytes(store) < matrix.nbytes() // 3
        assert store.list_ids(AbortFlag())[:2] == ["m00000", "m00001"]
    finally:
        store.close()
