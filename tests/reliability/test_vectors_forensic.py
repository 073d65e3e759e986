"""Forgotten claims leave no trace in the vector files: neither their ids nor their vectors'
bytes (R-PRIV-3, R-FORGET-1, R-FORGET-3).

DuckDB frees a deleted row's blocks without zeroing them, so a delete alone leaves the id
readable in the file; the store rewrites a file that had deletes `scrub_delay_seconds`
(2 s) after the delete while it stays open, when it closes it, and on the next open after a
kill (tests/adapters/duckdb_vectors/test_duckdb_crash.py). The warm-up snapshot beside it is
removed before the delete and rewritten at close from the live rows only. DuckDB
compresses the float arrays, so a stored vector's raw float32 bytes were not found even
before the delete (measured: 0 of 50 here); the id scan is the one with a positive control.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pytest

from memory_adapters.duckdb_vectors import agents
from memory_plugins.bootstrap import open_memory

CONFIG = '[plugins.embedding_provider]\nname = "hashing"\n'
TOPICS = ["bees", "sailing", "Tolstoy", "pottery", "chess", "tango", "bonsai", "kites"]
FACTS = [f"The user's fact number {n} is about {TOPICS[n % 8]} and {n * 7}." for n in range(40)]


def vectors_on_disk(path: Path) -> dict[str, bytes]:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        rows = conn.execute("SELECT memory_id, embedding FROM memory_vector").fetchall()
    finally:
        conn.close()
    return {claim_id: np.asarray(vector, dtype="<f4").tobytes() for claim_id, vector in rows}


def every_byte(root: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file())


def run(tmp_path: Path) -> tuple[dict[str, bytes], dict[str, bytes], bytes]:
    """Store 40 facts for `ana` and 10 for `bo`, delete half of ana's, clear bo; return
    (forgotten, kept, bytes of every vector file)."""
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    data = tmp_path / "data"

    async def seed() -> None:
        memory = open_memory(data, config=tmp_path / "config.toml")
        try:
            for fact in FACTS:
                await memory.remember("ana", fact)
            for fact in FACTS[:10]:
                await memory.remember("bo", fact)
            assert await memory.warm("ana") and await memory.warm("bo")
        finally:
            await memory.aclose()

    async def forget(ids: list[str]) -> None:
        memory = open_memory(data, config=tmp_path / "config.toml")
        try:
            for claim_id in ids:
                assert await memory.delete("ana", claim_id) >= 1
            await memory.clear("bo")
        finally:
            await memory.aclose()

    asyncio.run(seed())
    vector_dir = data / "vectors"
    ana = vectors_on_disk(vector_dir / "ana.v2.duckdb")
    bo = vectors_on_disk(vector_dir / "bo.v2.duckdb")
    assert len(ana) == 40 and len(bo) == 10
    before = every_byte(vector_dir)
    assert all(claim_id.encode() in before for claim_id in [*ana, *bo])  # the scan can see
    doomed = sorted(ana)[::2]
    asyncio.run(forget(doomed))
    forgotten = {claim_id: ana[claim_id] for claim_id in doomed} | bo
    kept = {claim_id: vector for claim_id, vector in ana.items() if claim_id not in doomed}
    return forgotten, kept, every_byte(vector_dir)


def test_deleted_and_cleared_vectors_leave_no_id_and_no_bytes_in_any_vector_file(
    tmp_path: Path,
) -> None:
    """R-PRIV-3, R-FORGET-1: after half of one agent's claims are deleted and another agent
    is cleared, no vector file holds a forgotten id or a forgotten vector's float32 bytes;
    the kept claims' vectors are all still there."""
    forgotten, kept, after = run(tmp_path)
    assert [claim_id for claim_id in forgotten if claim_id.encode() in after] == []
    assert [claim_id for claim_id, vector in forgotten.items() if vector in after] == []
    assert vectors_on_disk(tmp_path / "data" / "vectors" / "ana.v2.duckdb") == kept
    assert not (tmp_path / "data" / "vectors" / "ana.v2.duckdb.scrub").exists()


def test_the_scan_finds_deleted_ids_when_the_rewrite_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The negative control: the same scenario without the rewrite leaves deleted ids in
    the file, so the test above can fail."""
    monkeypatch.setattr(agents, "compact", lambda *args, **kwargs: None)
    forgotten, _, after = run(tmp_path)
    assert any(claim_id.encode() in after for claim_id in forgotten)


# The documented bound is the delay plus the rewrite (well under a second at this size);
# the margin absorbs a loaded machine.
SCRUB_BOUND_SECONDS = 30.0


def run_open(tmp_path: Path) -> tuple[list[str], list[str], bytes, bool]:
    """Seed ana, then with the same process still open delete half of her claims and wait
    for the scrub; return (forgotten ids, kept ids, bytes of every vector file while still
    open, whether the scrub marker was gone within the bound)."""
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    data = tmp_path / "data"
    marker = data / "vectors" / "ana.v2.duckdb.scrub"

    async def scenario() -> tuple[list[str], list[str], bytes, bool]:
        memory = open_memory(data, config=tmp_path / "config.toml")
        try:
            ids = sorted([(await memory.remember("ana", fact)).claim_id or "" for fact in FACTS])
            assert await memory.warm("ana")
            assert all(claim_id.encode() in every_byte(data / "vectors") for claim_id in ids)
            doomed = ids[::2]
            for claim_id in doomed:
                assert await memory.delete("ana", claim_id) >= 1
            assert marker.exists()
            started = time.monotonic()
            while marker.exists() and time.monotonic() - started < SCRUB_BOUND_SECONDS:
                await asyncio.sleep(0.05)
            scrubbed = not marker.exists()
            kept = [claim_id for claim_id in ids if claim_id not in doomed]
            return doomed, kept, every_byte(data / "vectors"), scrubbed
        finally:
            await memory.aclose()

    return asyncio.run(scenario())


def test_deleted_vectors_leave_the_open_file_within_the_scrub_bound(tmp_path: Path) -> None:
    """R-PRIV-3, R-FORGET-1: the process stays open after the deletes; within the scrub
    delay plus one rewrite no vector file holds a deleted id, and every kept id is there."""
    doomed, kept, after, scrubbed = run_open(tmp_path)
    assert scrubbed
    assert [claim_id for claim_id in doomed if claim_id.encode() in after] == []
    assert [claim_id for claim_id in kept if claim_id.encode() not in after] == []


def test_the_open_file_keeps_deleted_ids_without_the_scrub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The negative control: with no scrub scheduled the deleted ids stay in the open file."""
    monkeypatch.setattr(agents.Agents, "scrub_soon", lambda self, agent: None)
    monkeypatch.setattr(sys.modules[__name__], "SCRUB_BOUND_SECONDS", 3.0)
    doomed, _, after, scrubbed = run_open(tmp_path)
    assert not scrubbed
    assert any(claim_id.encode() in after for claim_id in doomed)
