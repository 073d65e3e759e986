"""Shared fixtures for the DuckDB vector adapter tests: a manual clock, call arguments, and
stores that are closed at teardown."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_adapters.duckdb_vectors import DuckDBVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def calls(clock: ManualClock) -> Callable[..., dict[str, Any]]:
    """`**calls()` — a generous deadline and a fresh token; `calls(seconds)` for a tight one."""

    def make(seconds: float = 60.0) -> dict[str, Any]:
        return {"deadline": Deadline.after(clock, seconds), "cancel": CancellationToken()}

    return make


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "vectors"


@pytest.fixture
def open_store(root: Path, clock: ManualClock) -> Iterator[Callable[..., DuckDBVectorStore]]:
    """Open a store on `root` (options as keyword arguments); all are closed at teardown."""
    opened: list[DuckDBVectorStore] = []

    def make(**options: Any) -> DuckDBVectorStore:
        store = DuckDBVectorStore(root, clock, **options)
        opened.append(store)
        return store

    yield make

    async def close_all() -> None:
        for store in opened:
            await store.aclose()

    asyncio.run(close_all())
