"""Crash tests: a real child process is SIGKILLed at each step of publish, rebuild and the v1
migration; the next open finds the old store or the new one, complete — never a corrupt one
(R-VEC-2, R-VEC-3); and the memory service killed while it changes embedder (R-PROV-4)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_adapters.clocks import MonotonicClock
from memory_adapters.duckdb_vectors import DuckDBVectorStore, write_v1_file
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.ports.vectors import VectorHealth
from memory_core.services.memory.diagnostics import CheckStatus
from memory_plugins.bootstrap import open_memory

CHILD = Path(__file__).with_name("duckdb_crash_child.py")
OLD = EmbeddingIdentity(provider="crash", model="old", dim=4)
NEW = EmbeddingIdentity(provider="crash", model="new", dim=4)
AGENT = "agent-x"
LEGACY = {
    f"legacy-{i:03d}": np.random.default_rng(i).standard_normal(4).tolist() for i in range(35)
}
PUBLISH_STEPS = ["staging-created", "staging-populated", "staging-closed", "published"]
MIGRATION_STEPS = [
    "legacy-attached",
    "page-copied",
    "staging-populated",
    "staging-closed",
    "published",
    "legacy-deleted",
]
Calls = Callable[..., dict[str, Any]]


def crash(root: Path, op: str, stop_at: str) -> None:
    """Run the child and insist that it died at the step (so the test cannot pass vacuously)."""
    done = subprocess.run(
        [sys.executable, str(CHILD), str(root), op, stop_at],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)


def inspect(
    root: Path, clock: ManualClock, calls: Calls
) -> tuple[EmbeddingIdentity | None, list[str]]:
    """What a fresh store (the next process) finds, without creating anything."""

    async def scenario() -> tuple[EmbeddingIdentity | None, list[str]]:
        store = DuckDBVectorStore(root, clock)
        try:
            identity = await store.stored_identity(AGENT, **calls())
            ids = list(await store.list_ids(AGENT, **calls()))
            assert store.health(AGENT) is VectorHealth.AVAILABLE
            return identity, ids
        finally:
            await store.aclose()

    found = asyncio.run(scenario())
    assert not (root / f"{AGENT}.v2.duckdb.quarantine").exists()
    assert not (root / f"{AGENT}.v2.duckdb.migrating").exists()
    return found


def usable(root: Path, clock: ManualClock, calls: Calls, identity: EmbeddingIdentity) -> list[str]:
    """Warm the agent for `identity`, write one more vector and read it back."""

    async def scenario() -> list[str]:
        store = DuckDBVectorStore(root, clock)
        try:
            # The first write for `identity` creates the store (or finishes a migration).
            await store.upsert(AGENT, identity, {"after-crash": [0, 1, 0, 0]}, **calls())
            ids = list(await store.list_ids(AGENT, **calls()))
            report = await store.warm(AGENT, identity, ids, config_generation=1, **calls())
            assert report.orphans_deleted == 0
            hits = await store.query(AGENT, report.certificate, [0, 1, 0, 0], 1, **calls())
            assert hits[0].claim_id == "after-crash"
            return ids
        finally:
            await store.aclose()

    return asyncio.run(scenario())


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_a_crash_while_publishing_a_new_store_leaves_nothing_or_the_new_store(
    tmp_path: Path, clock: ManualClock, calls: Calls, step: str
) -> None:
    """R-VEC-2: before the rename there is no store; from the rename on, a complete one."""
    crash(tmp_path, "publish", step)
    identity, ids = inspect(tmp_path, clock, calls)
    if step == "published":
        assert (identity, ids) == (OLD, [])
    else:
        assert (identity, ids) == (None, [])
    assert usable(tmp_path, clock, calls, OLD) == ["after-crash"]


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_a_crash_while_rebuilding_leaves_the_old_store_or_the_new_one(
    tmp_path: Path, clock: ManualClock, calls: Calls, step: str
) -> None:
    """R-VEC-2, R-PROV-4: the rename is the only commit point of a rebuild."""

    async def seed() -> None:
        store = DuckDBVectorStore(tmp_path, clock)
        await store.upsert(AGENT, OLD, {"old-1": [1, 0, 0, 0], "old-2": [0, 0, 1, 0]}, **calls())
        await store.aclose()

    asyncio.run(seed())
    crash(tmp_path, "rebuild", step)
    identity, ids = inspect(tmp_path, clock, calls)
    if step == "published":
        assert (identity, ids) == (NEW, [])
        assert usable(tmp_path, clock, calls, NEW) == ["after-crash"]
    else:
        assert (identity, ids) == (OLD, ["old-1", "old-2"])
        assert usable(tmp_path, clock, calls, OLD) == ["after-crash", "old-1", "old-2"]


@pytest.mark.parametrize("step", MIGRATION_STEPS)
def test_a_crash_during_v1_migration_keeps_v1_until_v2_is_complete(
    tmp_path: Path, clock: ManualClock, calls: Calls, step: str
) -> None:
    """R-VEC-2: before the rename v1 is intact and the migration simply runs again; after it
    v2 holds every legacy vector and v1 is swept."""
    v1 = tmp_path / f"{AGENT}.duckdb"
    write_v1_file(v1, OLD, LEGACY)
    before = v1.read_bytes()
    crash(tmp_path, "migrate", step)
    identity, ids = inspect(tmp_path, clock, calls)
    if MIGRATION_STEPS.index(step) < MIGRATION_STEPS.index("published"):
        assert (identity, ids) == (None, [])
        assert v1.read_bytes() == before
    else:
        assert (identity, ids) == (OLD, sorted(LEGACY))
        assert not v1.exists()  # swept by the open that found v2
    assert usable(tmp_path, clock, calls, OLD) == sorted([*LEGACY, "after-crash"])
    assert not v1.exists()


def test_a_crash_after_a_committed_write_keeps_it_through_the_wal(
    tmp_path: Path, clock: ManualClock, calls: Calls
) -> None:
    """R-VEC-2: a v2 file with a residual WAL is authoritative; committed writes survive."""

    async def seed() -> None:
        store = DuckDBVectorStore(tmp_path, clock)
        await store.upsert(AGENT, OLD, {"old-1": [1, 0, 0, 0]}, **calls())
        await store.aclose()

    asyncio.run(seed())
    crash(tmp_path, "write", "written")
    assert (tmp_path / f"{AGENT}.v2.duckdb.wal").exists()
    assert inspect(tmp_path, clock, calls) == (OLD, ["late", "old-1"])


@pytest.mark.parametrize("step", ["deleted", *PUBLISH_STEPS])
def test_a_crash_before_a_delete_is_scrubbed_is_finished_by_the_next_open(
    tmp_path: Path, clock: ManualClock, calls: Calls, step: str
) -> None:
    """R-PRIV-3, R-VEC-2: killed after the delete committed — before the close's rewrite or
    at any step of it — the next open rewrites the file: the deleted id is in no file and
    the other vectors are all there."""

    async def seed() -> None:
        store = DuckDBVectorStore(tmp_path, clock)
        await store.upsert(AGENT, OLD, {"old-1": [1, 0, 0, 0], "old-2": [0, 0, 1, 0]}, **calls())
        await store.aclose()

    asyncio.run(seed())
    crash(tmp_path, "scrub", step)
    assert inspect(tmp_path, clock, calls) == (OLD, ["old-2"])
    leftovers = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"old-1" not in leftovers and b"old-2" in leftovers
    assert not (tmp_path / f"{AGENT}.v2.duckdb.scrub").exists()


def hashing(dimensions: int) -> str:
    return (
        '[plugins.embedding_provider]\nname = "hashing"\n'
        f"[plugins.embedding_provider.options]\ndimensions = {dimensions}\n"
    )


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_a_crash_while_the_service_changes_embedder_is_repaired_by_the_next_start(
    tmp_path: Path, step: str
) -> None:
    """R-VEC-2, R-PROV-4: the claims' reset and the new namespace's publish are one change.
    Killed at any step of it — the rename included — the next start re-embeds every claim
    with the new model, and doctor finds nothing left to repair."""
    (tmp_path / "old.toml").write_text(hashing(8), encoding="utf-8")
    (tmp_path / "new.toml").write_text(hashing(16), encoding="utf-8")
    facts = ["The user keeps bees.", "The user sails on Sundays.", "The user reads Tolstoy."]

    async def seed() -> list[str]:
        memory = open_memory(tmp_path, config=tmp_path / "old.toml")
        try:
            ids = [(await memory.remember(AGENT, fact)).claim_id for fact in facts]
            assert await memory.warm(AGENT)
            assert memory.pending_embeddings(AGENT) == 0
            return sorted(claim_id for claim_id in ids if claim_id is not None)
        finally:
            await memory.aclose()

    claim_ids = asyncio.run(seed())
    crash(tmp_path, "reidentify", step)

    async def restart() -> None:
        memory = open_memory(tmp_path, config=tmp_path / "new.toml")
        try:
            # The first warm-up may find the old namespace and rebuild it; the second embeds.
            assert await memory.warm(AGENT)
            assert await memory.warm(AGENT)
            vectors = memory.index.vectors
            assert vectors is not None
            calls = {
                "deadline": Deadline.after(MonotonicClock(), 60),
                "cancel": CancellationToken(),
            }
            assert sorted(await vectors.list_ids(AGENT, **calls)) == claim_ids
            assert memory.pending_embeddings(AGENT) == 0
            report = await memory.diagnose([AGENT])
            assert {check.status for check in report.checks} == {CheckStatus.OK}, report.checks
        finally:
            await memory.aclose()

    asyncio.run(restart())
