"""The one-time v1 → v2 migration through an isolated read-only reader (R-VEC-2)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
from duckdb_vector_support import IDENTITY

from memory_adapters.duckdb_vectors import DuckDBVectorStore, write_v1_file
from memory_adapters.duckdb_vectors.files import StoreFiles
from memory_core.domain.claims import EmbeddingIdentity

Opener = Callable[..., DuckDBVectorStore]
Calls = Callable[..., dict[str, Any]]


def legacy_vectors(count: int) -> dict[str, list[float]]:
    rng = np.random.default_rng(7)
    return {
        f"claim-{i:04d}": rng.standard_normal(4).astype(np.float32).tolist() for i in range(count)
    }


def test_v1_rows_are_carried_over_exactly_and_v1_is_deleted(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-2: every v1 row arrives in v2 (several pages), and the v1 file goes after the
    rename."""
    root.mkdir(parents=True)
    vectors = legacy_vectors(130)
    write_v1_file(root / "a.duckdb", IDENTITY, vectors)
    steps: list[str] = []

    async def scenario() -> None:
        store = open_store(migration_page_rows=50, on_step=steps.append)
        report = await store.warm("a", IDENTITY, list(vectors), config_generation=1, **calls())
        assert report.missing_ids == ()
        assert report.vector_count == 130
        assert await store.list_ids("a", **calls()) == sorted(vectors)
        for claim_id in ("claim-0000", "claim-0077", "claim-0129"):
            hits = await store.query("a", report.certificate, vectors[claim_id], 1, **calls())
            assert hits[0].claim_id == claim_id
            assert hits[0].similarity == pytest.approx(1.0, abs=1e-6)
        await store.aclose()

    asyncio.run(scenario())
    # A clean close leaves the matrix snapshot beside the store (the warm-up fast path).
    assert sorted(path.name for path in root.iterdir()) == ["a.v2.duckdb", "a.v2.snapshot"]
    assert steps.count("page-copied") == 3
    assert steps.index("legacy-attached") < steps.index("published") < steps.index("legacy-deleted")


@pytest.mark.parametrize(
    "meta",
    [
        pytest.param([("test", "other-model", 4)], id="other-model"),
        pytest.param([("other", "unit", 4)], id="other-provider"),
        pytest.param([], id="no-meta-row"),
        pytest.param([("test", "unit", 4), ("test", "unit", 4)], id="two-meta-rows"),
    ],
)
def test_a_v1_file_whose_meta_does_not_match_is_deleted_and_v2_starts_empty(
    open_store: Opener, calls: Calls, root: Path, meta: list[tuple[str, str, int]]
) -> None:
    """R-VEC-2, R-PROV-4: vectors of another identity are never migrated into this one."""
    root.mkdir(parents=True)
    vectors = legacy_vectors(5)
    write_v1_file(root / "a.duckdb", IDENTITY, vectors, meta=meta)

    async def scenario() -> None:
        store = open_store()
        report = await store.warm("a", IDENTITY, list(vectors), config_generation=1, **calls())
        assert report.vector_count == 0
        assert report.missing_ids == tuple(sorted(vectors))
        await store.aclose()

    asyncio.run(scenario())
    assert sorted(path.name for path in root.iterdir()) == ["a.v2.duckdb"]


def test_a_v1_file_of_another_dimension_is_not_migrated(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-PROV-4: a dim change discards the legacy vectors."""
    root.mkdir(parents=True)
    wide = EmbeddingIdentity(provider="test", model="unit", dim=6)
    write_v1_file(root / "a.duckdb", wide, {"x": [1, 0, 0, 0, 0, 0]})

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"y": [1, 0, 0, 0]}, **calls())
        assert await store.list_ids("a", **calls()) == ["y"]
        await store.aclose()

    asyncio.run(scenario())
    assert not (root / "a.duckdb").exists()


def test_a_v1_file_with_duplicate_ids_is_not_migrated(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-2: an ambiguous legacy table is dropped rather than guessed at."""
    root.mkdir(parents=True)
    path = root / "a.duckdb"
    write_v1_file(path, IDENTITY, {"x": [1, 0, 0, 0]})
    conn = duckdb.connect(str(path))
    conn.execute("INSERT INTO memory_vector_v1 VALUES ('x', [0, 1, 0, 0])")
    conn.close()

    async def scenario() -> None:
        store = open_store()
        assert (
            await store.warm("a", IDENTITY, ["x"], config_generation=1, **calls())
        ).vector_count == 0
        await store.aclose()

    asyncio.run(scenario())


def test_the_v1_file_is_attached_read_only_and_survives_a_refused_migration(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-2: an interrupted migration leaves v1 byte-for-byte intact for the next try."""
    root.mkdir(parents=True)
    vectors = legacy_vectors(40)
    write_v1_file(root / "a.duckdb", IDENTITY, vectors)
    before = (root / "a.duckdb").read_bytes()

    class Stop(Exception):
        pass

    def stop_after_first_page(step: str) -> None:
        if step == "page-copied":
            raise Stop()

    async def scenario() -> None:
        store = open_store(migration_page_rows=10, on_step=stop_after_first_page)
        with pytest.raises(Stop):
            await store.warm("a", IDENTITY, list(vectors), config_generation=1, **calls())
        await store.aclose()
        assert (root / "a.duckdb").read_bytes() == before
        assert not (root / "a.v2.duckdb").exists()
        retry = open_store()
        report = await retry.warm("a", IDENTITY, list(vectors), config_generation=1, **calls())
        assert report.vector_count == 40
        await retry.aclose()

    asyncio.run(scenario())
    files = StoreFiles(root=root, agent_id="a")
    assert not files.v1.exists() and not files.staging.exists()
