"""The warm-up snapshot: used only while it matches its file, gone before any change
(issue 15 start-up, R-VEC-1, R-VEC-4, R-PRIV-3).

A clean close leaves the resident matrix beside the v2 file; the next warm-up reads it
instead of DuckDB. These tests prove it is read, that it answers exactly as the store
would, and that nothing stale or deleted can come back through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
from duckdb_vector_support import IDENTITY

from memory_adapters.duckdb_vectors import DuckDBVectorStore, agent_store
from memory_adapters.duckdb_vectors.files import StoreFiles

Opener = Callable[..., DuckDBVectorStore]
Calls = Callable[..., dict[str, Any]]

VECTORS = {
    f"claim-{n:03d}": [float((n * 7 + k) % 11) - 5.0 + 0.5 * k for k in range(IDENTITY.dim)]
    for n in range(60)
}


def _seed(open_store: Opener, calls: Calls) -> None:
    async def scenario() -> None:
        store = open_store()
        await store.upsert("a", IDENTITY, VECTORS, **calls())
        await store.warm("a", IDENTITY, list(VECTORS), config_generation=1, **calls())
        await store.aclose()

    asyncio.run(scenario())


def _answers(open_store: Opener, calls: Calls, wanted: list[str]) -> list[list[str]]:
    async def scenario() -> list[list[str]]:
        store = open_store()
        report = await store.warm("a", IDENTITY, wanted, config_generation=1, **calls())
        hits = await store.query_batch(
            "a", report.certificate, [VECTORS[key] for key in sorted(VECTORS)[:5]], 3, **calls()
        )
        await store.aclose()
        return [[hit.claim_id for hit in answer] for answer in hits]

    return asyncio.run(scenario())


def _no_duckdb_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("the warm-up read the matrix through DuckDB")

    monkeypatch.setattr(agent_store, "_stack", refuse)


def test_a_clean_close_leaves_a_snapshot_the_next_warm_up_reads_instead_of_duckdb(
    open_store: Opener, calls: Calls, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15, R-VEC-1: the second warm-up never touches DuckDB's rows and answers
    exactly as the first did."""
    _seed(open_store, calls)
    files = StoreFiles(root=root, agent_id="a")
    assert files.snapshot.exists()
    through_duckdb = _answers(open_store, calls, list(VECTORS))  # before: proves the answers
    files.snapshot.unlink()
    _seed(open_store, calls)  # the snapshot again, from a warm-up that read DuckDB
    _no_duckdb_read(monkeypatch)
    assert _answers(open_store, calls, list(VECTORS)) == through_duckdb


@pytest.mark.parametrize("change", ["upsert", "delete"])
def test_the_snapshot_is_gone_before_the_first_change_reaches_the_file(
    open_store: Opener, calls: Calls, root: Path, change: str
) -> None:
    """R-VEC-2, R-PRIV-3: from the first write or delete on, no snapshot exists, so a kill
    at any later point cannot leave one that disagrees with the file."""
    _seed(open_store, calls)
    files = StoreFiles(root=root, agent_id="a")

    async def scenario() -> bool:
        store = open_store()
        await store.warm("a", IDENTITY, list(VECTORS), config_generation=1, **calls())
        present_after_warm = files.snapshot.exists()
        if change == "upsert":
            await store.upsert("a", IDENTITY, {"claim-new": [1.0, 2.0, 3.0, 4.0]}, **calls())
        else:
            await store.delete("a", ["claim-001"], **calls())
        assert not files.snapshot.exists()
        await store.aclose()
        return present_after_warm

    assert asyncio.run(scenario()) is True
    snapshot = files.snapshot.read_bytes()  # rewritten at the close, from the matrix
    assert (b"claim-new" in snapshot) is (change == "upsert")
    assert (b"claim-001" in snapshot) is (change != "delete")


@pytest.mark.parametrize("damage", ["file-changed", "truncated", "garbage"])
def test_a_snapshot_that_does_not_match_its_file_is_removed_and_duckdb_is_read(
    open_store: Opener, calls: Calls, root: Path, damage: str
) -> None:
    """R-VEC-4: a changed store file (here behind the adapter's back) or a damaged snapshot
    is never trusted: the warm-up reads DuckDB and sees exactly what the file holds."""
    _seed(open_store, calls)
    files = StoreFiles(root=root, agent_id="a")
    if damage == "file-changed":
        conn = duckdb.connect(str(files.v2))
        conn.execute("DELETE FROM memory_vector WHERE memory_id = 'claim-002'")
        conn.close()
    elif damage == "truncated":
        data = files.snapshot.read_bytes()
        files.snapshot.write_bytes(data[: len(data) // 2])
    else:
        files.snapshot.write_bytes(b"AMVSNAP1" + np.arange(50, dtype="<f4").tobytes())

    async def scenario() -> list[str]:
        store = open_store()
        report = await store.warm("a", IDENTITY, list(VECTORS), config_generation=1, **calls())
        assert not files.snapshot.exists()
        ids = list(await store.list_ids("a", **calls()))
        await store.aclose()
        return [*report.missing_ids, "|", *ids]

    found = asyncio.run(scenario())
    kept = [key for key in sorted(VECTORS) if damage != "file-changed" or key != "claim-002"]
    missing = ["claim-002"] if damage == "file-changed" else []
    assert found == [*missing, "|", *kept]
