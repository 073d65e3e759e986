"""Create-or-open, publish, quarantine and recovery of one agent's files (R-VEC-1..3)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from duckdb_vector_support import IDENTITY

from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_adapters.duckdb_vectors.files import StoreFiles
from memory_adapters.duckdb_vectors.schema import FILE_MEMORY_LIMIT, connect, create_schema
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import StoreQuarantined
from memory_core.ports.vectors import VectorHealth

Opener = Callable[..., DuckDBVectorStore]
Calls = Callable[..., dict[str, Any]]


def names(root: Path) -> list[str]:
    return sorted(path.name for path in root.iterdir()) if root.exists() else []


def test_first_upsert_publishes_a_v2_file_with_one_meta_row(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-1: plain FLOAT[dim] table, exactly one meta row with format_version 2."""

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        await store.aclose()

    asyncio.run(scenario())
    assert names(root) == ["a.v2.duckdb"]
    conn = duckdb.connect(str(root / "a.v2.duckdb"), read_only=True)
    try:
        assert conn.execute("SELECT * FROM embedding_meta").fetchall() == [("test", "unit", 4, 2)]
        columns = conn.execute(
            "SELECT column_name, data_type FROM duckdb_columns() "
            "WHERE table_name = 'memory_vector' ORDER BY column_index"
        ).fetchall()
        assert columns == [("memory_id", "VARCHAR"), ("embedding", "FLOAT[4]")]
        indexes = conn.execute("SELECT count(*) FROM duckdb_indexes()").fetchall()
        assert indexes == [(0,)]  # no secondary (approximate) index, only the key
    finally:
        conn.close()


def test_a_new_agents_store_is_held_by_the_instance_that_published_it(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-2, issue 15: the published file is attached to the connection that built it, as
    its default database with the file store's memory limit; what is written then survives
    a clean close (no WAL left) and a reopen by a fresh connection."""

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        conn = store._agents.get("a").store.conn
        (path,) = conn.execute(
            "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchall()[0]
        assert Path(path) == root / "a.v2.duckdb"
        limit = conn.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        with duckdb.connect(config={"memory_limit": FILE_MEMORY_LIMIT}) as probe:
            expected = probe.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        assert limit == expected
        await store.upsert("a", IDENTITY, {"y": [0, 1, 0, 0]}, **calls())
        await store.aclose()
        assert names(root) == ["a.v2.duckdb"]
        reopened = open_store()
        assert sorted(await reopened.list_ids("a", **calls())) == ["x", "y"]
        await reopened.aclose()

    asyncio.run(scenario())


def test_read_only_calls_never_create_files(open_store: Opener, calls: Calls, root: Path) -> None:
    """R-VEC-1: without an identity nothing is created for an unknown agent."""

    async def scenario() -> None:
        store = open_store()
        assert await store.list_ids("ghost", **calls()) == []
        assert await store.delete("ghost", ["x"], **calls()) == 0
        assert await store.stored_identity("ghost", **calls()) is None

    asyncio.run(scenario())
    assert names(root) == []


def test_a_quarantine_marker_wipes_every_file_and_starts_empty(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-3: step 0 — v2, staging and v1 files go, the marker last, then a fresh store."""

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        await store.aclose()
        files = StoreFiles(root=root, agent_id="a")
        files.write_marker("test")
        files.staging.write_bytes(b"half-written")
        files.v1.write_bytes(b"legacy")
        reopened = open_store()
        assert await reopened.list_ids("a", **calls()) == []
        assert names(root) == []
        await reopened.upsert("a", IDENTITY, {"y": [0, 1, 0, 0]}, **calls())
        assert await reopened.list_ids("a", **calls()) == ["y"]

    asyncio.run(scenario())


def test_a_leftover_staging_file_is_deleted_and_the_v2_store_kept(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-2: staging is never a commit point."""

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        await store.aclose()
        StoreFiles(root=root, agent_id="a").staging.write_bytes(b"garbage")
        reopened = open_store()
        assert await reopened.list_ids("a", **calls()) == ["x"]
        await reopened.aclose()

    asyncio.run(scenario())
    assert names(root) == ["a.v2.duckdb"]


def test_a_v1_file_with_a_wal_is_discarded_unopened(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-2: step 3 — a v1 caught mid-write is deleted and an empty v2 published."""
    root.mkdir(parents=True)
    files = StoreFiles(root=root, agent_id="a")
    files.v1.write_bytes(b"not even a database")
    files.v1_wal.write_bytes(b"wal")

    async def scenario() -> None:
        store = open_store()
        report = await store.warm("a", IDENTITY, ["x"], config_generation=1, **calls())
        assert report.missing_ids == ("x",)
        await store.aclose()

    asyncio.run(scenario())
    assert names(root) == ["a.v2.duckdb"]


def test_an_orphan_v2_wal_is_deleted(open_store: Opener, calls: Calls, root: Path) -> None:
    """R-VEC-2: step 5 — a WAL without its database is never replayed onto a new file."""
    root.mkdir(parents=True)
    StoreFiles(root=root, agent_id="a").v2_wal.write_bytes(b"stale wal")

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        assert await store.list_ids("a", **calls()) == ["x"]
        await store.aclose()

    asyncio.run(scenario())
    assert names(root) == ["a.v2.duckdb"]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param("DELETE FROM embedding_meta", id="no-meta-row"),
        pytest.param(
            "INSERT INTO embedding_meta VALUES ('test', 'unit', 4, 2)", id="two-meta-rows"
        ),
        pytest.param("UPDATE embedding_meta SET format_version = 1", id="old-format"),
        pytest.param("UPDATE embedding_meta SET dim = 8", id="meta-disagrees-with-column"),
        pytest.param("DROP TABLE memory_vector", id="no-vector-table"),
        pytest.param(
            "DROP TABLE memory_vector; CREATE TABLE memory_vector "
            "(memory_id BIGINT PRIMARY KEY, embedding FLOAT[4])",
            id="ids-not-text",
        ),
        pytest.param(
            "DROP TABLE memory_vector; CREATE TABLE memory_vector "
            "(memory_id VARCHAR PRIMARY KEY, vector FLOAT[4])",
            id="no-embedding-column",
        ),
    ],
)
def test_a_v2_file_failing_its_self_check_is_replaced_only_when_creating(
    open_store: Opener, calls: Calls, root: Path, damage: str
) -> None:
    """R-VEC-1: an unusable store is never used; a read leaves it alone, a write with an
    identity replaces it with a fresh empty store."""
    root.mkdir(parents=True)
    conn = connect(root / "a.v2.duckdb")
    create_schema(conn, IDENTITY)
    conn.execute("INSERT INTO memory_vector VALUES ('old', [1, 0, 0, 0])")
    conn.execute(damage)
    conn.close()

    async def scenario() -> None:
        store = open_store()
        assert await store.list_ids("a", **calls()) == []
        assert await store.stored_identity("a", **calls()) is None
        assert (root / "a.v2.duckdb").exists()
        await store.upsert("a", IDENTITY, {"new": [0, 1, 0, 0]}, **calls())
        assert await store.list_ids("a", **calls()) == ["new"]
        assert await store.stored_identity("a", **calls()) == IDENTITY

    asyncio.run(scenario())


def test_a_file_duckdb_cannot_open_quarantines_until_the_next_process(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-VEC-3: a native open failure writes the marker and closes the agent for this store
    object; the next one (the next process) wipes and starts empty."""
    root.mkdir(parents=True)
    (root / "a.v2.duckdb").write_bytes(b"\x00garbage" * 512)

    async def scenario() -> None:
        store = open_store()
        with pytest.raises(StoreQuarantined):
            await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        assert store.health("a") is VectorHealth.QUARANTINED
        assert (root / "a.v2.duckdb.quarantine").exists()
        with pytest.raises(StoreQuarantined):
            await store.list_ids("a", **calls())
        # Other agents are unaffected.
        await store.upsert("b", IDENTITY, {"y": [1, 0, 0, 0]}, **calls())
        await store.aclose()

        next_process = open_store()
        await next_process.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        assert await next_process.list_ids("a", **calls()) == ["x"]
        assert next_process.health("a") is VectorHealth.AVAILABLE
        await next_process.aclose()

    asyncio.run(scenario())
    assert names(root) == ["a.v2.duckdb", "b.v2.duckdb"]


def test_rebuild_replaces_the_file_and_removes_legacy_files(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-PROV-4: the reindex path publishes a fresh empty store for the new identity."""
    other = EmbeddingIdentity(provider="test", model="bigger", dim=6)

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        StoreFiles(root=root, agent_id="a").v1.write_bytes(b"legacy")
        await store.rebuild("a", other, **calls())
        await store.aclose()
        reopened = open_store()
        assert await reopened.stored_identity("a", **calls()) == other
        assert await reopened.list_ids("a", **calls()) == []
        await reopened.aclose()

    asyncio.run(scenario())
    assert names(root) == ["a.v2.duckdb"]


def test_drop_agent_removes_every_file_including_a_marker(
    open_store: Opener, calls: Calls, root: Path
) -> None:
    """R-FORGET-4: retirement deletes the vector files of the agent and nothing else."""

    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        await store.upsert("b", IDENTITY, {"x": [1, 0, 0, 0]}, **calls())
        files = StoreFiles(root=root, agent_id="a")
        files.v1.write_bytes(b"legacy")
        files.staging.write_bytes(b"staging")
        await store.drop_agent("a", **calls())
        assert not [name for name in names(root) if name.startswith("a.")]
        await store.aclose()

    asyncio.run(scenario())
    assert names(root) == ["b.v2.duckdb"]
